/**
 * `deno task soak [--minutes 10] [--window 1000]`: posting at full speed for ten minutes into a
 * channel with two fast webhook subscriptions, while a third subscription, whose receiver answers
 * after one second, hears a second channel that gets one post in SLOW_SHARE (one slow endpoint
 * can take a few attempts a second; the whole stream would never drain). Then waits until the
 * backlog is delivered. Prints, per minute: posts/s, deliveries/s, pending jobs, the oldest job's
 * age, API p99 and the service's RSS; then checks the targets of issue 12: RSS at the end of
 * posting at most 1.25x its value after the first minute, posts/s in the last minute at least
 * 0.9x the first, every post delivered to every matching subscription, no 5xx.
 */
import { parseArgs } from "node:util";
import { answerHelp } from "../core/task_help.ts";
import { createChannel } from "../domain/channels/channels.ts";
import type { Message } from "../core/types.ts";
import { measureBacklog } from "../kv/outbox/backlog.ts";
import { keys } from "../kv/keys.ts";
import { freePort, startService } from "./procs.ts";
import { openCtx, seedSubscriptions, seedWorkspace, serviceEnv } from "./seed.ts";
import { parseWrk, requireWrk, writeScript, wrk } from "./wrk.ts";

answerHelp(
  Deno.args,
  `Usage: deno task soak [--minutes 10] [--window 1000]
Posts at full speed for --minutes into a channel two fast webhook subscriptions hear, while a slow
one hears another; then waits for every delivery. Prints a line a minute and checks issue 12's
targets (memory, throughput, every post delivered, no 5xx). Needs wrk.`,
);
const { values } = parseArgs({
  args: Deno.args,
  options: { minutes: { type: "string", default: "10" }, window: { type: "string" } },
});
const MINUTES = Number(values.minutes);
const SLOW_SHARE = 500;
const SLOW_MS = 1_000;
const DRAIN_LIMIT_MS = 60 * 60_000;
const LOAD = { threads: 2, connections: 20 };

/** A receiver in this process that notes which messages reached it. */
function collector(delayMs: number) {
  const got = new Set<string>();
  let count = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const id = JSON.parse(await req.text()).data.id;
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    got.add(id);
    count++;
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    got,
    count: () => count,
    stop: () => server.shutdown(),
  };
}

function postLua(fast: string, slow: string, token: string) {
  return `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${token}"
n = 0
function request()
  n = n + 1
  local path = ${JSON.stringify(fast)}
  if n % ${SLOW_SHARE} == 0 then path = ${JSON.stringify(slow)} end
  return wrk.format(nil, path, nil, string.format('{"body":"soak %d: the quick brown fox jumps over the lazy dog"}', n))
end
`;
}

interface Sample {
  phase: string;
  minute: number;
  postsPerS: number | null;
  deliveriesPerS: number;
  pending: number;
  oldestS: number | null;
  p99Ms: number | null;
  rssMb: number;
  non2xx: number;
}

const pad = (v: unknown, n: number) => String(v ?? "-").padStart(n);
function printSample(s: Sample) {
  console.log(
    [
      pad(s.phase, 7),
      pad(s.minute, 6),
      pad(s.postsPerS?.toFixed(0), 8),
      pad(s.deliveriesPerS.toFixed(0), 12),
      pad(s.pending, 10),
      pad(s.oldestS?.toFixed(1), 10),
      pad(s.p99Ms?.toFixed(1), 9),
      pad(s.rssMb.toFixed(0), 7),
      pad(s.non2xx, 6),
    ].join(" | "),
  );
}

await requireWrk();
const root = await Deno.makeTempDir({ prefix: "soak-" });
const receivers = { fast1: collector(0), fast2: collector(0), slow: collector(SLOW_MS) };
const deliveredSoFar = () =>
  receivers.fast1.count() + receivers.fast2.count() + receivers.slow.count();
try {
  const kvPath = `${root}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  const quiet = await createChannel(ctx, seeded.subject, { name: "slow", visibility: "public" });
  await seedSubscriptions(ctx, seeded, receivers.fast1.url, 1);
  await seedSubscriptions(ctx, seeded, receivers.fast2.url, 1);
  await seedSubscriptions(ctx, { ...seeded, channel: quiet }, receivers.slow.url, 1);
  const env = serviceEnv(kvPath, freePort());
  if (values.window) env.WEBHOOKS_MAX_IN_MEMORY = values.window;
  const service = await startService(env);
  const path = (id: string) => `/api/v1/channels/${id}/messages`;
  const script = await writeScript(
    root,
    "soak",
    postLua(path(seeded.channel.id), path(quiet.id), seeded.token),
  );
  console.log(
    `soak: ${MINUTES} min of posting (wrk -t${LOAD.threads} -c${LOAD.connections}), then until ` +
      `the backlog is delivered; window ${values.window ?? "default (1000)"}\n`,
  );
  console.log(
    "  phase | minute |  posts/s | deliveries/s |    pending | oldest s | API p99 ms | RSS MB |  5xx",
  );
  const samples: Sample[] = [];
  const backlog = async () => {
    const b = await measureBacklog(ctx.kv);
    const oldestS = b.oldestCreatedAt ? (Date.now() - Date.parse(b.oldestCreatedAt)) / 1000 : null;
    return { pending: b.pending, oldestS };
  };
  let delivered = deliveredSoFar();
  for (let minute = 1; minute <= MINUTES; minute++) {
    const started = Date.now();
    const report = parseWrk(
      await wrk({ url: `${service.url}${path(seeded.channel.id)}`, script }, 60, LOAD),
    );
    const now = deliveredSoFar();
    const rate = (now - delivered) / ((Date.now() - started) / 1000);
    delivered = now;
    const sample: Sample = {
      phase: "posting",
      minute,
      postsPerS: report.rate,
      deliveriesPerS: rate,
      ...await backlog(),
      p99Ms: report.p99Ms,
      rssMb: service.rssMb(),
      non2xx: report.non2xx,
    };
    samples.push(sample);
    printSample(sample);
  }
  const drainStarted = Date.now();
  for (let minute = MINUTES + 1;; minute++) {
    const started = Date.now();
    let state = await backlog();
    while (state.pending > 0 && Date.now() - started < 60_000) {
      await new Promise((r) => setTimeout(r, 5_000));
      state = await backlog();
    }
    const now = deliveredSoFar();
    const sample: Sample = {
      phase: "drain",
      minute,
      postsPerS: null,
      deliveriesPerS: (now - delivered) / ((Date.now() - started) / 1000),
      ...state,
      p99Ms: null,
      rssMb: service.rssMb(),
      non2xx: 0,
    };
    delivered = now;
    samples.push(sample);
    printSample(sample);
    if (state.pending === 0 || Date.now() - drainStarted > DRAIN_LIMIT_MS) break;
  }

  const ids = async (channelId: string) => {
    const out: string[] = [];
    for await (const e of ctx.kv.list<Message>({ prefix: keys.timeline(channelId) })) {
      out.push(e.value.id);
    }
    return out;
  };
  const main = await ids(seeded.channel.id);
  const slow = await ids(quiet.id);
  const missing = {
    fast1: main.filter((id) => !receivers.fast1.got.has(id)).length,
    fast2: main.filter((id) => !receivers.fast2.got.has(id)).length,
    slow: slow.filter((id) => !receivers.slow.got.has(id)).length,
  };
  const posting = samples.filter((s) => s.phase === "posting");
  const [first, last] = [posting[0], posting.at(-1)!];
  const checks: [string, boolean][] = [
    [
      `RSS at the end of posting ${last.rssMb.toFixed(0)} MB <= 1.25 x ${
        first.rssMb.toFixed(0)
      } MB after the first minute`,
      last.rssMb <= 1.25 * first.rssMb,
    ],
    [
      `posts/s in the last minute ${last.postsPerS!.toFixed(0)} >= 0.9 x ${
        first.postsPerS!.toFixed(0)
      } in the first`,
      last.postsPerS! >= 0.9 * first.postsPerS!,
    ],
    [
      `every post delivered to every matching subscription (${main.length} + ${slow.length} ` +
      `posts; missing ${JSON.stringify(missing)})`,
      Object.values(missing).every((n) => n === 0),
    ],
    [
      `no 5xx (non-2xx answers: ${posting.reduce((n, s) => n + s.non2xx, 0)})`,
      posting.every((s) => s.non2xx === 0),
    ],
  ];
  console.log();
  for (const [what, ok] of checks) console.log(`${ok ? "PASS" : "FAIL"}  ${what}`);
  ctx.kv.close();
  await service.stop();
} finally {
  await Promise.all(Object.values(receivers).map((r) => r.stop()));
  await Deno.remove(root, { recursive: true });
}
