/**
 * Issue 20, a remote store: one subscription's backlog drained by the service whose every KV
 * operation waits 5 ms or 20 ms first (bench/remote_kv.ts), against the same drain on the
 * local file. There the round trips set the pace, not the CPU: the figure to watch is
 * deliveries per second per subscription, and how far each delay brings it down.
 */
import { freePort, startService } from "../procs.ts";
import type { Receiver } from "../receiver.ts";
import { infoRow, type Row } from "../report.ts";
import { openCtx, seedPosts, seedSubscriptions, seedWorkspace, serviceEnv } from "../seed.ts";
import { type Bench, scenarioDir, using } from "./context.ts";

const EVENTS = 1_000;
const DELAYS_MS = [0, 5, 20];
const DRAIN_TIMEOUT_MS = 60_000;

async function drain(root: string, receiver: Receiver, delayMs: number): Promise<number> {
  const dir = await scenarioDir(root, `remote-${delayMs}`);
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  await seedSubscriptions(ctx, seeded, receiver.url, 1);
  await seedPosts(ctx, seeded, EVENTS);
  ctx.kv.close();
  receiver.reset();
  const env = { ...serviceEnv(kvPath, freePort()), BENCH_KV_DELAY_MS: String(delayMs) };
  return await using(startService(env), async () => {
    if (!await receiver.waitFor(EVENTS, DRAIN_TIMEOUT_MS)) {
      throw new Error(`only ${receiver.count} of ${EVENTS} deliveries arrived`);
    }
    return (receiver.count - 1) / ((receiver.lastAt - receiver.firstAt) / 1000);
  });
}

export async function remoteStore({ root, receiver }: Bench): Promise<Row[]> {
  const rates = new Map<number, number>();
  for (const delayMs of DELAYS_MS) rates.set(delayMs, await drain(root, receiver, delayMs));
  const local = rates.get(0)!;
  return DELAYS_MS.map((delayMs) =>
    infoRow(
      `one subscription drains, KV +${delayMs} ms per operation (deliveries/s)`,
      rates.get(delayMs)!.toFixed(0),
      delayMs === 0 ? "" : local.toFixed(0),
      delayMs === 0 ? "" : `${(rates.get(delayMs)! / local * 100).toFixed(0)}%`,
    )
  );
}
