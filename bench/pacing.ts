/** Posting at a steady rate through the API, noting when each answer came. */
import { sampleBody } from "./baselines/shared.ts";
import type { Proc } from "./procs.ts";
import type { Seeded } from "./seed.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An absolute time in ms, comparable across the bench's workers. */
export const now = () => performance.timeOrigin + performance.now();

/** Where posts go: the service's base URL, a token, and a channel it may post in. */
export interface PostTarget {
  url: string;
  token: string;
  channelId: string;
}

export const targetOf = (proc: Proc, seeded: Seeded): PostTarget => ({
  url: proc.url,
  token: seeded.token,
  channelId: seeded.channel.id,
});

/** Posts one message (over `client`'s connection, if given); its id and when the answer was in. */
export async function post(
  to: PostTarget,
  n: number,
  client?: Deno.HttpClient,
): Promise<[string, number]> {
  const res = await fetch(`${to.url}/api/v1/channels/${to.channelId}/messages`, {
    client,
    method: "POST",
    headers: { Authorization: `Bearer ${to.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ body: sampleBody(n) }),
  });
  const body = await res.json();
  const answered = now();
  if (res.status !== 201) throw new Error(`POST message: HTTP ${res.status}`);
  return [body.data.id, answered];
}

/** Starts `count` calls at `perSecond`, each on its own schedule slot; their results, in order. */
export async function onSchedule<T>(
  count: number,
  perSecond: number,
  call: (i: number) => Promise<T>,
): Promise<T[]> {
  const start = performance.now();
  const calls: Promise<T>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = start + i * 1000 / perSecond - performance.now();
    if (wait > 0) await sleep(wait);
    calls.push(call(i));
  }
  return await Promise.all(calls);
}

/** Posts `count` messages at `perSecond`; id → answered at. */
export async function paced(proc: Proc, seeded: Seeded, count: number, perSecond: number) {
  const to = targetOf(proc, seeded);
  return new Map(await onSchedule(count, perSecond, (i) => post(to, i)));
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)];
}
