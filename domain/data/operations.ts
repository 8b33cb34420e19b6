/**
 * What an operator's probes read: whether the store answers (GET /up), and the store-wide
 * delivery figures /metrics reports. Read when asked, so an idle service pays nothing for them.
 */
import type { Ctx } from "../context.ts";
import { jobsPending, oldestJobAge, subscriptions } from "../../core/metrics.ts";
import { measureBacklog } from "../../kv/outbox/backlog.ts";
import { keys } from "../../kv/keys.ts";
import { countSubscriptionsByStatus } from "../../kv/webhooks.ts";
import { LAYOUT_VERSION } from "../../kv/store/migrations.ts";
import { VERSION } from "../../core/version.ts";
import { isFilePath } from "../../core/settings.ts";

/** What this release is: its version, and the store layout it reads and writes. */
export const build = { version: VERSION, layout: LAYOUT_VERSION } as const;

const PROBE_TIMEOUT_MS = 2_000;

/**
 * Why the local store file can't serve, or null: deleted under the running service (`rm -rf
 * ./data`), SQLite keeps writing to the deleted file, which nobody else (the CLI, a second
 * instance) sees: the service answers, but not for the store its operator looks at.
 */
export async function storeFileGone(ctx: Ctx): Promise<string | null> {
  const path = ctx.settings.kvPath;
  if (!isFilePath(path)) return null;
  try {
    await Deno.stat(path);
    return null;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) return null;
    return `KV_PATH: ${path} was deleted while the service runs; it writes to a store nothing ` +
      "else can read. Stop the service and start it again.";
  }
}

/** Whether the store answers a read within two seconds. */
export async function storeAnswers(ctx: Ctx): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      ctx.kv.get(keys.probe()),
      new Promise((_, reject) => {
        timer = setTimeout(reject, PROBE_TIMEOUT_MS, new Error("timeout"));
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    // Probes arrive every few seconds: a timer left behind by each would pile up.
    clearTimeout(timer);
  }
}

/** Sets the store-wide gauges (backlog, its oldest job's age, subscriptions by status). */
export async function measureDelivery(ctx: Ctx): Promise<void> {
  const backlog = await measureBacklog(ctx.kv);
  jobsPending.set(backlog.pending);
  oldestJobAge.set(
    backlog.oldestCreatedAt ? (Date.now() - Date.parse(backlog.oldestCreatedAt)) / 1000 : 0,
  );
  for (const [status, n] of Object.entries(await countSubscriptionsByStatus(ctx.kv))) {
    subscriptions.set({ status }, n);
  }
}
