/**
 * Posts at a steady rate and prints each post's latency (JSON, ms): run as a process of its own,
 * so that what it measures is the service's answer, not its own event loop's share of the bench
 * process with the webhook receiver. The posts take turns over `connections` connections, each
 * with a client of its own, as that many API clients would.
 * `<base url> <token> <channel id> <per second> <seconds> [connections]`.
 */
import { now, onSchedule, post } from "./pacing.ts";

const [url, token, channelId, rate, seconds, connections = "1"] = Deno.args;
const perSecond = Number(rate);
const clients = Array.from(
  { length: Number(connections) },
  () => Deno.createHttpClient({ poolMaxIdlePerHost: 1 }),
);

const latencies = await onSchedule(perSecond * Number(seconds), perSecond, async (i) => {
  const sent = now();
  const [, answered] = await post({ url, token, channelId }, i, clients[i % clients.length]);
  return answered - sent;
});
for (const client of clients) client.close();
console.log(JSON.stringify(latencies));
