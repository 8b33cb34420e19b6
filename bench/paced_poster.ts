/**
 * Posts at a steady rate and prints each post's latency (JSON, ms): run as a process of its own,
 * so that what it measures is the service's answer, not its own event loop's share of the bench
 * process with the webhook receiver. `<base url> <token> <channel id> <per second> <seconds>`.
 */
import { sampleBody } from "./baselines/shared.ts";

const [url, token, channelId, rate, seconds] = Deno.args;
const perSecond = Number(rate);

async function post(n: number): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/v1/channels/${channelId}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ body: sampleBody(n) }),
  });
  await res.body?.cancel();
  if (res.status !== 201) throw new Error(`POST message: HTTP ${res.status}`);
  return performance.now() - t0;
}

const start = performance.now();
const posts: Promise<number>[] = [];
for (let i = 0; i < perSecond * Number(seconds); i++) {
  const wait = start + i * 1000 / perSecond - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  posts.push(post(i));
}
console.log(JSON.stringify(await Promise.all(posts)));
