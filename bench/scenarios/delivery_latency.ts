/**
 * Issue 4, latency: messages posted through the API at a steady 100 per second; for each
 * delivery, the time from the API's answer to the receiver's arrival. The engine starts on an
 * event as its commit lands, so a delivery can arrive before the answer: a negative latency.
 */
import { freePort, type Proc, startService } from "../procs.ts";
import type { Receiver } from "../receiver.ts";
import { infoRow, limitRow, type Row } from "../report.ts";
import { openCtx, type Seeded, seedSubscriptions, seedWorkspace, serviceEnv } from "../seed.ts";
import { paced, percentile } from "../pacing.ts";
import { type Bench, scenarioDir, using } from "./context.ts";

const SUBSCRIPTIONS = 3;
const PER_SECOND = 100;
const SECONDS = 5;
const WARMUP_POSTS = 20;

async function measureLatency(proc: Proc, seeded: Seeded, receiver: Receiver) {
  await paced(proc, seeded, WARMUP_POSTS, PER_SECOND);
  await receiver.waitFor(WARMUP_POSTS * SUBSCRIPTIONS, 10_000);
  receiver.reset();
  const count = PER_SECOND * SECONDS;
  const answeredAt = await paced(proc, seeded, count, PER_SECOND);
  if (!await receiver.waitFor(count * SUBSCRIPTIONS, 30_000)) {
    throw new Error(`only ${receiver.count} of ${count * SUBSCRIPTIONS} deliveries arrived`);
  }
  const latencies: number[] = [];
  for (const [id, answered] of answeredAt) {
    for (const at of receiver.arrivals.get(id) ?? []) latencies.push(at - answered);
  }
  return latencies.sort((a, b) => a - b);
}

export async function deliveryLatency({ root, receiver }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "latency");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  await seedSubscriptions(ctx, seeded, receiver.url, SUBSCRIPTIONS);
  ctx.kv.close();
  const latencies = await using(
    startService(serviceEnv(kvPath, freePort())),
    (p) => measureLatency(p, seeded, receiver),
  );
  const label = `answer->arrival @${PER_SECOND} ev/s x ${SUBSCRIPTIONS} subs`;
  return [
    infoRow(`${label} p50`, `${percentile(latencies, 0.5).toFixed(1)} ms`),
    limitRow(`${label} p99`, percentile(latencies, 0.99), 1.5, "ms"),
    infoRow(`${label} max`, `${latencies[latencies.length - 1].toFixed(1)} ms`),
  ];
}
