/**
 * Issue 19, the live event stream. Latency: 1,000 connected streams that each hear every post,
 * posts at 200 per second; for every event on every stream, the time from the POST's answer to
 * its arrival, once the first second's posts are through. Memory: the service's RSS with 10,000
 * idle streams open, against the same service with none. Cost to writers: posting as fast as wrk
 * can with 1,000 streams connected to the team (listening to another channel, so each post wakes
 * them all and is sent to none) against posting with none; and, for context, with 1,000 streams
 * that hear every post.
 */
import type { Ctx } from "../../domain/context.ts";
import { createChannel } from "../../domain/channels/channels.ts";
import { createToken } from "../../domain/people/tokens.ts";
import { createUser } from "../../domain/people/workspace.ts";
import { paced, percentile } from "../pacing.ts";
import { freePort, type Proc, startBaseline, startService } from "../procs.ts";
import { infoRow, limitRow, ratioRow, type Row } from "../report.ts";
import { openCtx, type Seeded, seedWorkspace, serviceEnv } from "../seed.ts";
import type { Command, Reply, StreamMode } from "../stream_clients.ts";
import { measure, postScript, writeScript } from "../wrk.ts";
import { type Bench, bestOf, scenarioDir, using } from "./context.ts";

const STREAMS = 1_000;
const IDLE_STREAMS = 10_000;
/** The most streams a token may hold. */
const PER_TOKEN = 10;
/** The most live tokens a user may hold. */
const TOKENS_PER_USER = 25;
const PER_SECOND = 200;
const SECONDS = 5;
/** After the first second's posts, before the measured ones: its tail arrives meanwhile. */
const SETTLE_MS = 1_000;
/** Client threads: more than one core reads the streams. */
const WORKERS = 2;
const BODY_LUA =
  `string.format('{"body":"Bench message %d-%d: the quick brown fox jumps over the lazy dog, twice over, for size."}', tid, n)`;

interface World {
  kvPath: string;
  seeded: Seeded;
  /** Read-only tokens of members, enough for IDLE_STREAMS. */
  tokens: string[];
  /** A channel nobody posts in. */
  quietChannelId: string;
}

async function seedReaders(ctx: Ctx, seeded: Seeded, count: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let u = 0; tokens.length < count; u++) {
    const user = await createUser(ctx, {
      teamId: seeded.subject.team_id,
      name: `Reader ${u}`,
      type: "human",
      role: "member",
    }, null);
    for (let t = 0; t < TOKENS_PER_USER && tokens.length < count; t++) {
      tokens.push((await createToken(ctx, user, { scopes: ["messages:read"], actor: null })).value);
    }
  }
  return tokens;
}

async function seedWorld(root: string): Promise<World> {
  const dir = await scenarioDir(root, "stream");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  const quiet = await createChannel(ctx, seeded.subject, { name: "quiet", visibility: "public" });
  const tokens = await seedReaders(ctx, seeded, IDLE_STREAMS / PER_TOKEN);
  ctx.kv.close();
  return { kvPath, seeded, tokens, quietChannelId: quiet.id };
}

/** Streams held open by worker threads of the bench. */
class Clients {
  readonly #workers = Array.from(
    { length: WORKERS },
    () => new Worker(new URL("../stream_clients.ts", import.meta.url), { type: "module" }),
  );

  #ask(worker: Worker, command: Command): Promise<Reply> {
    return new Promise((resolve) => {
      worker.onmessage = (e: MessageEvent<Reply>) => resolve(e.data);
      worker.postMessage(command);
    });
  }

  /** Opens `streams` streams, PER_TOKEN per token, shared out between the workers. */
  async open(url: string, tokens: string[], streams: number, mode: StreamMode) {
    const needed = tokens.slice(0, Math.ceil(streams / PER_TOKEN));
    const replies = await Promise.all(this.#workers.map((w, i) =>
      this.#ask(w, {
        type: "open",
        url,
        tokens: needed.filter((_, n) => n % WORKERS === i),
        perToken: PER_TOKEN,
        mode,
      })
    ));
    const opened = replies.reduce((n, r) => n + (r.type === "ready" ? r.opened : 0), 0);
    if (opened !== needed.length * PER_TOKEN) {
      throw new Error(`only ${opened} streams opened: ${JSON.stringify(replies)}`);
    }
  }

  /** Closes every stream; what they received. */
  async stop() {
    const replies = await Promise.all(this.#workers.map((w) => this.#ask(w, { type: "stop" })));
    for (const w of this.#workers) w.terminate();
    const arrivals = new Map<string, number[]>();
    let events = 0;
    let endedByService = 0;
    for (const r of replies) {
      if (r.type !== "stopped") continue;
      events += r.events;
      endedByService += r.endedByService;
      for (const [id, times] of r.arrivals) arrivals.set(id, [...arrivals.get(id) ?? [], ...times]);
    }
    return { arrivals, events, endedByService };
  }
}

const streamUrl = (proc: Proc, query = "") => `${proc.url}/api/v1/events/stream${query}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every event's answer->arrival times of `posted`, sorted, and the arrivals that never came. */
function latenciesOf(posted: Map<string, number>, arrivals: Map<string, number[]>) {
  const latencies: number[] = [];
  let missing = 0;
  for (const [id, answered] of posted) {
    const times = arrivals.get(id) ?? [];
    missing += STREAMS - times.length;
    for (const at of times) latencies.push(at - answered);
  }
  return { latencies: latencies.sort((a, b) => a - b), missing };
}

/**
 * The first second after the streams connect is measured apart: the service is still bringing
 * 1,000 new streams up to date and compiling its hot paths, and its latency then says what a
 * reconnecting crowd meets, not what a running service does.
 */
async function latency(world: World): Promise<Row[]> {
  return await using(startService(serviceEnv(world.kvPath, freePort())), async (proc) => {
    const clients = new Clients();
    await clients.open(streamUrl(proc), world.tokens, STREAMS, "latency");
    const first = await paced(proc, world.seeded, PER_SECOND, PER_SECOND);
    await sleep(SETTLE_MS);
    const cpuBefore = proc.cpuMs();
    const started = performance.now();
    const answeredAt = await paced(proc, world.seeded, PER_SECOND * SECONDS, PER_SECOND);
    const serviceCpu = (proc.cpuMs() - cpuBefore) / (performance.now() - started);
    // The workers count as they read; asking them now would stop them, so allow the tail in.
    await sleep(2_000);
    const { arrivals, endedByService } = await clients.stop();
    const { latencies, missing } = latenciesOf(answeredAt, arrivals);
    const cold = latenciesOf(first, arrivals);
    const label = `stream: answer->arrival, ${STREAMS} streams @${PER_SECOND} posts/s`;
    return [
      infoRow(`${label} p50`, `${percentile(latencies, 0.5).toFixed(1)} ms`),
      limitRow(`${label} p99`, percentile(latencies, 0.99), 50, "ms"),
      infoRow(`${label} max`, `${latencies.at(-1)!.toFixed(1)} ms`),
      infoRow(
        "  events on streams / missing / streams closed",
        `${latencies.length + cold.latencies.length} / ${
          missing + cold.missing
        } / ${endedByService}`,
      ),
      infoRow("  service CPU while posting (of one core)", `${(serviceCpu * 100).toFixed(0)} %`),
      infoRow(
        "  first second after the streams connect, p50 / p99",
        `${percentile(cold.latencies, 0.5).toFixed(1)} / ${
          percentile(cold.latencies, 0.99).toFixed(1)
        } ms`,
      ),
    ];
  });
}

/** The RSS an idle stream adds to `proc`, in KB, and the RSS with IDLE_STREAMS open. */
async function idleCost(proc: Proc, url: string, tokens: string[]) {
  await (await fetch(url, {
    headers: { Authorization: `Bearer ${tokens[0]}` },
    signal: AbortSignal.timeout(200),
  })).body?.cancel().catch(() => {});
  await sleep(1_000);
  const before = proc.rssMb();
  const clients = new Clients();
  await clients.open(url, tokens, IDLE_STREAMS, "drain");
  await sleep(2_000);
  const after = proc.rssMb();
  await clients.stop();
  return { rss: after, perStream: (after - before) * 1024 / IDLE_STREAMS };
}

async function idleMemory(root: string, world: World): Promise<Row[]> {
  const service = await using(
    startService(serviceEnv(world.kvPath, freePort())),
    (proc) => idleCost(proc, streamUrl(proc), world.tokens),
  );
  const dir = await scenarioDir(root, "stream-bare");
  const bare = await using(
    startBaseline("sse_idle", [`${dir}/baseline.sqlite3`]),
    (proc) => idleCost(proc, `${proc.url}/stream`, world.tokens),
  );
  return [
    infoRow(
      `stream: RSS per idle stream, ${IDLE_STREAMS} open (vs bare Deno.serve SSE)`,
      `${service.perStream.toFixed(1)} KB (${service.rss.toFixed(0)} MB)`,
      `${bare.perStream.toFixed(1)} KB`,
      `${(service.perStream / bare.perStream).toFixed(2)}x`,
    ),
  ];
}

/** Posts as fast as wrk can, with `streams` streams of `query` connected meanwhile. */
async function postWith(root: string, world: World, streams: number, query: string) {
  const dir = await scenarioDir(root, "stream-post");
  const path = `/api/v1/channels/${world.seeded.channel.id}/messages`;
  const auth = { Authorization: `Bearer ${world.seeded.token}` };
  const script = await writeScript(dir, "post", postScript(path, auth, BODY_LUA));
  return await using(startService(serviceEnv(world.kvPath, freePort())), async (p) => {
    const clients = new Clients();
    if (streams > 0) await clients.open(streamUrl(p, query), world.tokens, streams, "drain");
    try {
      return await measure({ url: `${p.url}${path}`, script }, { server: p });
    } finally {
      await clients.stop();
    }
  });
}

export async function eventStream({ root }: Bench): Promise<Row[]> {
  const world = await seedWorld(root);
  const rows = [...await latency(world), ...await idleMemory(root, world)];
  const other = `?channel_ids=${world.quietChannelId}`;
  const { none, elsewhere } = await bestOf({
    none: () => postWith(root, world, 0, ""),
    elsewhere: () => postWith(root, world, STREAMS, other),
  });
  const hearing = await postWith(root, world, STREAMS, "");
  const info = (row: Row): Row => ({ ...row, target: "(info)", pass: null });
  return [
    ...rows,
    ratioRow(`POST messages, ${STREAMS} streams connected vs none`, elsewhere, none, 0.8),
    info(
      ratioRow(`POST messages, ${STREAMS} streams hearing every post vs none`, hearing, none, 0.8),
    ),
  ];
}
