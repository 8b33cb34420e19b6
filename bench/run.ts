/**
 * `deno task bench`: the performance targets, each measured against a bare baseline in the same
 * run (the machine is small and noisy, so only same-run ratios mean anything). Prints a table
 * and exits 0 whatever it shows; non-zero only when a measurement broke.
 */
import { Receiver } from "./receiver.ts";
import { printTable, type Row } from "./report.ts";
import { channelShow } from "./scenarios/channel_show.ts";
import type { Bench } from "./scenarios/context.ts";
import { postMessages } from "./scenarios/post_messages.ts";
import { readMessages } from "./scenarios/read_messages.ts";
import { deliveryThroughput } from "./scenarios/delivery_throughput.ts";
import { deliveryLatency } from "./scenarios/delivery_latency.ts";
import { incomingPost } from "./scenarios/incoming_post.ts";
import { requireWrk } from "./wrk.ts";

const SCENARIOS: [string, (bench: Bench) => Promise<Row[]>][] = [
  ["channel show", channelShow],
  ["post messages", postMessages],
  ["incoming webhook", incomingPost],
  ["read messages", readMessages],
  ["delivery throughput", deliveryThroughput],
  ["delivery latency", deliveryLatency],
];

await requireWrk();
const only = Deno.args;
const bench: Bench = {
  root: await Deno.makeTempDir({ prefix: "bench-" }),
  receiver: new Receiver().start(),
};
const rows: Row[] = [];
let broken = false;
const started = Date.now();
try {
  for (const [name, run] of SCENARIOS) {
    if (only.length > 0 && !only.some((o) => name.includes(o))) continue;
    const t0 = Date.now();
    try {
      rows.push(...await run(bench));
      console.error(`${name}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    } catch (e) {
      broken = true;
      console.error(`${name}: BROKEN`, e);
    }
  }
} finally {
  await bench.receiver.stop();
  await Deno.remove(bench.root, { recursive: true });
}
console.log();
printTable(rows);
console.log(`\ntotal ${((Date.now() - started) / 1000).toFixed(0)} s`);
if (broken) Deno.exit(1);
