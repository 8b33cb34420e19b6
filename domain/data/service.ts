/**
 * Where the service answers and what it runs on, recorded in the store for the admin CLI: the URLs
 * it prints (login links, incoming-webhook URLs) name a running instance (or the BASE_URL the
 * operator set), never merely the last one started; and a CLI on a newer Deno than the service's
 * writes nothing the service couldn't read.
 */
import type { Ctx } from "../context.ts";
import { errorFields, log } from "../../core/log.ts";
import { SettingsError } from "../../core/settings.ts";
import {
  dropInstance,
  getRecordedBaseUrl,
  getRecordedDeno,
  liveInstances,
  putInstance,
  setRecordedBaseUrl,
  setRecordedDeno,
} from "../../kv/service/service_record.ts";
import type { Store } from "../../kv/store/store.ts";
import { storeFileGone } from "./operations.ts";

/** How often a running instance says so; it counts as gone three renewals after its last. */
const RENEW_MS = 30_000;

/**
 * This instance in the store while it runs: recorded at start, renewed, withdrawn at stop (an
 * instance killed outright runs out on its own).
 */
export class Presence {
  readonly #id = crypto.randomUUID();
  readonly #startedAt = Date.now();
  #timer: ReturnType<typeof setInterval> | undefined;
  #saidGone = false;

  constructor(private readonly ctx: Ctx) {}

  async start(): Promise<void> {
    const { kv, settings } = this.ctx;
    if ((await getRecordedBaseUrl(kv)) !== settings.baseUrl) {
      await setRecordedBaseUrl(kv, settings.baseUrl);
    }
    if ((await getRecordedDeno(kv)) !== Deno.version.deno) {
      await setRecordedDeno(kv, Deno.version.deno);
    }
    await this.#renew();
    this.#timer = setInterval(() => {
      this.#renew().catch((e) => log.warn("service: renewing its record failed", errorFields(e)));
    }, RENEW_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await dropInstance(this.ctx.kv, this.#id).catch(() => {});
  }

  async #renew() {
    const gone = await storeFileGone(this.ctx);
    if (gone && !this.#saidGone) log.error(gone);
    this.#saidGone = gone !== null;
    return await putInstance(this.ctx.kv, this.#id, {
      base_url: this.ctx.settings.baseUrl,
      explicit: this.ctx.settings.baseUrlSet,
      deno: Deno.version.deno,
      started_at: this.#startedAt,
      alive_until: Date.now() + 3 * RENEW_MS,
    });
  }
}

/**
 * The address the CLI's URLs name: a running instance's BASE_URL as the operator set it, else the
 * address of the instance running longest; with none known to run, the one the service last
 * started with. Null where no service ever started.
 */
export async function serviceBaseUrl(kv: Store): Promise<string | null> {
  const live = (await liveInstances(kv)).sort((a, b) => a.started_at - b.started_at);
  const chosen = live.find((i) => i.explicit) ?? live[0];
  return chosen?.base_url ?? await getRecordedBaseUrl(kv);
}

const minor = (version: string) => version.split(".").slice(0, 2).map(Number);
const newer = (a: string, b: string) => {
  const [[a1, a2], [b1, b2]] = [minor(a), minor(b)];
  return a1 > b1 || (a1 === b1 && a2 > b2);
};

/**
 * Refuses a write by this process to a store whose service runs an older Deno (a running
 * instance's, or the last to start): values a newer Deno writes can't be read by an older one.
 * `command` is what to run instead, on that Deno.
 */
export async function requireReadableByService(kv: Store, command: string): Promise<void> {
  const versions = [
    ...(await liveInstances(kv)).map((i) => i.deno),
    await getRecordedDeno(kv),
  ].filter((v): v is string => v !== null);
  const oldest = versions.sort((a, b) => newer(a, b) ? 1 : newer(b, a) ? -1 : 0)[0];
  if (!oldest || !newer(Deno.version.deno, oldest)) return;
  throw new SettingsError(
    `KV_PATH: the service on this store runs Deno ${oldest}, which can't read what this CLI's Deno ${Deno.version.deno} would write; nothing was written. Run it on Deno ${oldest}: npx --yes deno@${oldest} run --allow-all --no-lock cli/admin.ts ${command}`,
  );
}
