/**
 * Issue 20, a remote store: one subscription's backlog drained by the service whose every KV
 * operation waits 5 ms or 20 ms first (bench/remote_kv.ts), against the same drain on the
 * local file; and posting into a channel there. The round trips set the pace, not the CPU: the
 * figures to watch are deliveries per second per subscription, and posts per second against
 * what the round trips allow (wrk's connections, each waiting for a post's round trips in turn).
 */
import { dirname } from "node:path";
import { freePort, startService } from "../procs.ts";
import type { Receiver } from "../receiver.ts";
import { remoteUrlOf } from "../remote_kv.ts";
import { infoRow, type Row } from "../report.ts";
import { openCtx, seedPosts, seedSubscriptions, seedWorkspace, serviceEnv } from "../seed.ts";
import { LOAD, measure, postScript, writeScript } from "../wrk.ts";
import { type Bench, scenarioDir, using } from "./context.ts";

const EVENTS = 1_000;
const DELAYS_MS = [0, 5, 20];
const DRAIN_TIMEOUT_MS = 60_000;
/**
 * Round trips on a post's path, one after the other: one read (the channel, the membership, the
 * audience's versions and the token's check in one getMany), then the commit. The token's last
 * use and the event stream's log are written off the path. A post that finds its channel's
 * commit under way also waits for that one first (a channel's appends commit one batch at a time).
 */
const POST_ROUND_TRIPS = 2;
const BODY_LUA = `string.format('{"body":"Remote store post %d-%d"}', tid, n)`;

/**
 * The service's settings for the store at `kvPath` answering `delayMs` late. With a delay the
 * service is told of a KV Connect URL standing for the file (bench/remote_kv.ts), so it runs as
 * it does on a remote store; without, the file is the embedded store, the local reference.
 */
async function remoteEnv(kvPath: string, delayMs: number): Promise<Record<string, string>> {
  const env = serviceEnv(kvPath, freePort());
  if (delayMs === 0) return env;
  return {
    ...env,
    KV_PATH: remoteUrlOf(kvPath),
    // Not a file now, so the key the seed made beside it is passed as a setting.
    APP_KEY: (await Deno.readTextFile(`${dirname(kvPath)}/app.key`)).trim(),
    DENO_KV_ACCESS_TOKEN: "bench",
    BENCH_KV_DELAY_MS: String(delayMs),
  };
}

/** Deliveries per second as one subscription's backlog drains, over a store `delayMs` away. */
async function drain(root: string, receiver: Receiver, delayMs: number): Promise<number> {
  const dir = await scenarioDir(root, `remote-${delayMs}`);
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  await seedSubscriptions(ctx, seeded, receiver.url, 1);
  await seedPosts(ctx, seeded, EVENTS);
  ctx.kv.close();
  receiver.reset();
  return await using(startService(await remoteEnv(kvPath, delayMs)), async () => {
    if (!await receiver.waitFor(EVENTS, DRAIN_TIMEOUT_MS)) {
      throw new Error(`only ${receiver.count} of ${EVENTS} deliveries arrived`);
    }
    return (receiver.count - 1) / ((receiver.lastAt - receiver.firstAt) / 1000);
  });
}

/** Posts per second into a channel with no subscription, over a store `delayMs` away. */
async function posting(root: string, delayMs: number): Promise<number> {
  const dir = await scenarioDir(root, `remote-post-${delayMs}`);
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  ctx.kv.close();
  const path = `/api/v1/channels/${seeded.channel.id}/messages`;
  const auth = { Authorization: `Bearer ${seeded.token}` };
  const script = await writeScript(dir, "post", postScript(path, auth, BODY_LUA));
  return await using(startService(await remoteEnv(kvPath, delayMs)), async (p) => {
    return (await measure({ url: `${p.url}${path}`, script })).rate;
  });
}

export async function remoteStore({ root, receiver }: Bench): Promise<Row[]> {
  const drains = new Map<number, number>();
  const posts = new Map<number, number>();
  for (const delayMs of DELAYS_MS) {
    drains.set(delayMs, await drain(root, receiver, delayMs));
    posts.set(delayMs, await posting(root, delayMs));
  }
  const local = drains.get(0)!;
  const drainRows = DELAYS_MS.map((delayMs) =>
    infoRow(
      `one subscription drains, KV +${delayMs} ms per operation (deliveries/s)`,
      drains.get(delayMs)!.toFixed(0),
      delayMs === 0 ? "" : local.toFixed(0),
      delayMs === 0 ? "" : `${(drains.get(delayMs)! / local * 100).toFixed(0)}%`,
    )
  );
  // What the round trips allow: each connection waits for a post's round trips in turn.
  const allowed = (delayMs: number) => LOAD.connections / (POST_ROUND_TRIPS * delayMs / 1000);
  const postRows = DELAYS_MS.map((delayMs) =>
    infoRow(
      `POST messages, KV +${delayMs} ms (posts/s; baseline: what ${POST_ROUND_TRIPS} round trips allow)`,
      posts.get(delayMs)!.toFixed(0),
      delayMs === 0 ? "" : allowed(delayMs).toFixed(0),
      delayMs === 0 ? "" : `${(posts.get(delayMs)! / allowed(delayMs) * 100).toFixed(0)}%`,
    )
  );
  return [...drainRows, ...postRows];
}
