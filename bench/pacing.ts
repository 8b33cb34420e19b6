/** Posting at a steady rate through the API, noting when each answer came. */
import { sampleBody } from "./baselines/shared.ts";
import type { Proc } from "./procs.ts";
import type { Seeded } from "./seed.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An absolute time in ms, comparable across the bench's workers. */
export const now = () => performance.timeOrigin + performance.now();

/** Posts one message; returns its id and when the answer was in. */
async function post(proc: Proc, seeded: Seeded, n: number): Promise<[string, number]> {
  const res = await fetch(`${proc.url}/api/v1/channels/${seeded.channel.id}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${seeded.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ body: sampleBody(n) }),
  });
  const body = await res.json();
  const answered = now();
  if (res.status !== 201) throw new Error(`POST message: HTTP ${res.status}`);
  return [body.data.id, answered];
}

/** Posts `count` messages at `perSecond`, each on its own schedule slot; id → answered at. */
export async function paced(proc: Proc, seeded: Seeded, count: number, perSecond: number) {
  const start = performance.now();
  const posts: Promise<[string, number]>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = start + i * 1000 / perSecond - performance.now();
    if (wait > 0) await sleep(wait);
    posts.push(post(proc, seeded, i));
  }
  return new Map(await Promise.all(posts));
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)];
}
