/**
 * Issue 4, latency: messages posted through the API at a steady 100 per second; for each
 * delivery, the time from the API's answer to the receiver's arrival. The engine starts on an
 * event as its commit lands, so a delivery can arrive before the answer: a negative latency.
 */
import { freePort, type Proc, startService } from "../procs.ts";
import type { Receiver } from "../receiver.ts";
import { infoRow, limitRow, type Row } from "../report.ts";
import { openCtx, type Seeded, seedSubscriptions, seedWorkspace, serviceEnv } from "../seed.ts";
import { sampleBody } from "../baselines/shared.ts";
import { type Bench, scenarioDir, using } from "./context.ts";

const SUBSCRIPTIONS = 3;
const PER_SECOND = 100;
const SECONDS = 5;
const WARMUP_POSTS = 20;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Posts one message; returns its id and when the answer was in. */
async function post(proc: Proc, seeded: Seeded, n: number): Promise<[string, number]> {
  const res = await fetch(`${proc.url}/api/v1/channels/${seeded.channel.id}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${seeded.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ body: sampleBody(n) }),
  });
  const body = await res.json();
  const answered = performance.now();
  if (res.status !== 201) throw new Error(`POST message: HTTP ${res.status}`);
  return [body.data.id, answered];
}

/** Posts `count` messages at PER_SECOND, each on its own schedule slot. */
async function paced(proc: Proc, seeded: Seeded, count: number) {
  const start = performance.now();
  const posts: Promise<[string, number]>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = start + i * 1000 / PER_SECOND - performance.now();
    if (wait > 0) await sleep(wait);
    posts.push(post(proc, seeded, i));
  }
  return new Map(await Promise.all(posts));
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)];
}

async function measureLatency(proc: Proc, seeded: Seeded, receiver: Receiver) {
  await paced(proc, seeded, WARMUP_POSTS);
  await receiver.waitFor(WARMUP_POSTS * SUBSCRIPTIONS, 10_000);
  receiver.reset();
  const count = PER_SECOND * SECONDS;
  const answeredAt = await paced(proc, seeded, count);
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
    limitRow(`${label} p99`, percentile(latencies, 0.99), 50, "ms"),
    infoRow(`${label} max`, `${latencies[latencies.length - 1].toFixed(1)} ms`),
  ];
}
