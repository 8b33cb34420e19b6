/**
 * Issue 4, throughput: a backlog of events × subscriptions drained by the service's delivery
 * engine into a fast local receiver, against a bare loop making one signed POST and one KV
 * commit per delivery at the engine's concurrency.
 */
import { freePort, runBaseline, startService } from "../procs.ts";
import type { Receiver } from "../receiver.ts";
import { type Measured, ratioRow, type Row } from "../report.ts";
import { openCtx, seedPosts, seedSubscriptions, seedWorkspace, serviceEnv } from "../seed.ts";
import { type Bench, bestOf, scenarioDir, using } from "./context.ts";

const SUBSCRIPTIONS = 4;
const EVENTS = 2000;
const DELIVERIES = SUBSCRIPTIONS * EVENTS;
/** The engine's defaults (delivery/engine.ts): 4 attempts per subscription, 64 in all. */
const CONCURRENCY = Math.min(64, 4 * SUBSCRIPTIONS);
const DRAIN_TIMEOUT_MS = 60_000;

/** Deliveries per second between the first and the last arrival. */
const arrivalRate = (r: Receiver) => (r.count - 1) / ((r.lastAt - r.firstAt) / 1000);

async function serviceDrain(root: string, receiver: Receiver): Promise<Measured> {
  const dir = await scenarioDir(root, "delivery");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  await seedSubscriptions(ctx, seeded, receiver.url, SUBSCRIPTIONS);
  // Committed here, where no engine runs: the jobs are left free, and the server's engine pulls
  // the backlog from KV as its window has room, from its start-up pull on.
  await seedPosts(ctx, seeded, EVENTS);
  ctx.kv.close();
  receiver.reset();
  return await using(startService(serviceEnv(kvPath, freePort())), async (p) => {
    // The engine may start before the server answers: count CPU only from here on.
    const [cpuBefore, countBefore] = [p.cpuMs(), receiver.count];
    if (!await receiver.waitFor(DELIVERIES, DRAIN_TIMEOUT_MS)) {
      throw new Error(`only ${receiver.count} of ${DELIVERIES} deliveries arrived`);
    }
    const cpuUs = (p.cpuMs() - cpuBefore) * 1000 / (receiver.count - countBefore);
    return { rate: arrivalRate(receiver), cpuUs };
  });
}

async function bareLoop(root: string, receiver: Receiver): Promise<Measured> {
  const dir = await scenarioDir(root, "delivery-bare");
  receiver.reset();
  const { cpuUs } = await runBaseline<{ cpuUs: number }>("delivery_loop", [
    receiver.url,
    `${dir}/baseline.sqlite3`,
    String(DELIVERIES),
    String(CONCURRENCY),
  ]);
  if (receiver.count !== DELIVERIES) {
    throw new Error(`the bare loop delivered ${receiver.count} of ${DELIVERIES}`);
  }
  return { rate: arrivalRate(receiver), cpuUs: cpuUs / DELIVERIES };
}

export async function deliveryThroughput({ root, receiver }: Bench): Promise<Row[]> {
  const { bare, service } = await bestOf({
    bare: () => bareLoop(root, receiver),
    service: () => serviceDrain(root, receiver),
  });
  const label = `webhook deliveries/s (${EVENTS} ev x ${SUBSCRIPTIONS} subs, c=${CONCURRENCY})`;
  return [ratioRow(label, service, bare, 0.7)];
}
