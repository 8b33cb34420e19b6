/**
 * `deno task bench`: the performance targets, each measured against a bare baseline in the same
 * run (the machine is small and noisy, so only same-run ratios mean anything). Prints a table
 * and exits 0 whatever it shows; non-zero only when a measurement broke.
 */
import { Receiver } from "./receiver.ts";
import { printTable, type Row } from "./report.ts";
import { channelShow } from "./scenarios/channel_show.ts";
import { channelList } from "./scenarios/channel_list.ts";
import type { Bench } from "./scenarios/context.ts";
import { postMessages } from "./scenarios/post_messages.ts";
import { readMessages } from "./scenarios/read_messages.ts";
import { deliveryThroughput } from "./scenarios/delivery_throughput.ts";
import { deliveryLatency } from "./scenarios/delivery_latency.ts";
import { postingWhileDelivering } from "./scenarios/posting_while_delivering.ts";
import { deliveryBursts } from "./scenarios/delivery_bursts.ts";
import { incomingPost } from "./scenarios/incoming_post.ts";
import { eventStream } from "./scenarios/event_stream.ts";
import { eventFeed } from "./scenarios/event_feed.ts";
import { botFeed } from "./scenarios/bot_feed.ts";
import { remoteStore } from "./scenarios/remote_store.ts";
import { twoInstances } from "./scenarios/two_instances.ts";
import { busyInstance } from "./scenarios/busy_instance.ts";
import { dataOverTime } from "./scenarios/data_over_time.ts";
import { apps } from "./scenarios/apps.ts";
import { votes } from "./scenarios/votes.ts";
import { socketMode } from "./scenarios/socket_mode.ts";
import { socketFlood } from "./scenarios/socket_flood.ts";
import { scheduled } from "./scenarios/scheduled.ts";
import { agentStreams } from "./scenarios/agent_streams.ts";
import { adminRemote } from "./scenarios/admin_remote.ts";
import { requireWrk } from "./wrk.ts";
import { answerHelp } from "../core/task_help.ts";

/** Each scenario, and about how long it takes on the 2-core machines here (for the progress line). */
const SCENARIOS: [string, (bench: Bench) => Promise<Row[]>, number][] = [
  ["channel show", channelShow, 30],
  ["channel list", channelList, 240],
  ["post messages", postMessages, 50],
  ["incoming webhook", incomingPost, 25],
  ["read messages", readMessages, 40],
  ["delivery throughput", deliveryThroughput, 45],
  ["delivery latency", deliveryLatency, 15],
  ["posting while delivering", postingWhileDelivering, 220],
  ["delivery bursts", deliveryBursts, 55],
  ["event stream", eventStream, 60],
  ["event feed", eventFeed, 120],
  ["bot feed", botFeed, 90],
  ["remote store", remoteStore, 30],
  ["two instances", twoInstances, 25],
  ["busy instance", busyInstance, 20],
  ["data over time", dataOverTime, 120],
  ["apps", apps, 40],
  ["votes", votes, 40],
  ["socket mode", socketMode, 60],
  ["socket flood", socketFlood, 30],
  ["scheduled messages", scheduled, 45],
  ["agent streams", agentStreams, 120],
  ["admin remote", adminRemote, 15],
];

answerHelp(
  Deno.args,
  `Usage: deno task bench [<part of a scenario's name> ...]
Runs the performance scenarios (all, or those whose names contain a word given), each against
bare baselines in the same run, and prints a table of figures against their targets
(docs/performance.md). Needs wrk. The scenarios, with about how long each takes:
${SCENARIOS.map(([name, , seconds]) => `  ${name.padEnd(26)} ${seconds} s`).join("\n")}`,
);
await requireWrk();
const only = Deno.args;
const chosen = SCENARIOS.filter(([name]) =>
  only.length === 0 || only.some((o) => name.includes(o))
);
if (chosen.length === 0) {
  console.error(
    `No scenario's name contains ${only.join(" or ")}: deno task bench --help lists them.`,
  );
  Deno.exit(2);
}
const bench: Bench = {
  root: await Deno.makeTempDir({ prefix: "bench-" }),
  receiver: new Receiver().start(),
};
// Interrupted, the bench leaves nothing behind: its stores can take hundreds of MB in /tmp.
Deno.addSignalListener("SIGINT", () => {
  Deno.removeSync(bench.root, { recursive: true });
  console.error("\ninterrupted; removed", bench.root);
  Deno.exit(130);
});
const total = chosen.reduce((n, [, , seconds]) => n + seconds, 0);
console.error(`${chosen.length} scenarios, about ${total} s in all`);
const rows: Row[] = [];
let broken = false;
const started = Date.now();
try {
  for (const [i, [name, run, seconds]] of chosen.entries()) {
    console.error(`[${i + 1}/${chosen.length}] ${name} (about ${seconds} s)`);
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
