/**
 * Posts at a steady rate and prints each post's latency (JSON, ms): run as a process of its own,
 * so that what it measures is the service's answer, not its own event loop's share of the bench
 * process with the webhook receiver. `<base url> <token> <channel id> <per second> <seconds>`.
 */
import { now, onSchedule, post } from "./pacing.ts";

const [url, token, channelId, rate, seconds] = Deno.args;
const perSecond = Number(rate);

const latencies = await onSchedule(perSecond * Number(seconds), perSecond, async (i) => {
  const sent = now();
  const [, answered] = await post({ url, token, channelId }, i);
  return answered - sent;
});
console.log(JSON.stringify(latencies));
