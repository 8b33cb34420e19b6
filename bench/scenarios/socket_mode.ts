/**
 * Issue 53, Socket Mode: from a post's answer to the app's envelope on one instance and across
 * two on one store; what 1,000 idle connections cost in memory and CPU; and whether 100 connected
 * apps slow posting. The app is a bare WebSocket in the bench process that acks every envelope.
 */
import type { Ctx } from "../../domain/context.ts";
import { createAppFromManifest } from "../../domain/apps/declared.ts";
import { installApp } from "../../domain/apps/installs.ts";
import { createAppToken } from "../../domain/apps/socket/app_tokens.ts";
import { addMemberAsOperator } from "../../domain/channels/members.ts";
import { getUser } from "../../kv/workspace.ts";
import { freePort, type Proc, startService } from "../procs.ts";
import { infoRow, limitRow, type Row } from "../report.ts";
import { openCtx, type Seeded, seedWorkspace, serviceEnv } from "../seed.ts";
import { now, onSchedule, percentile, post, targetOf } from "../pacing.ts";
import { type Bench, scenarioDir, using } from "./context.ts";

const POSTS = 300;
const POSTS_PER_SECOND = 100;
const IDLE_APPS = 100;
/** Connections per idle app: Socket Mode's most, so 1,000 in all. */
const PER_APP = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A Socket Mode app with an app-level token; `listening`: installed, its bot in the channel. */
async function seedSocketApp(
  ctx: Ctx,
  { seeded, name, listening }: { seeded: Seeded; name: string; listening: boolean },
): Promise<string> {
  const manifest = {
    display_information: { name },
    oauth_config: { scopes: { bot: ["channels:history"] } },
    settings: {
      event_subscriptions: { bot_events: ["message.channels"] },
      socket_mode_enabled: true,
    },
  };
  const { app } = await createAppFromManifest(ctx, JSON.stringify(manifest), null);
  if (listening) {
    const { install } = await installApp(ctx, {
      app,
      teamId: seeded.subject.team_id,
      scopes: ["messages:read"],
      channelId: null,
      approvedBy: null,
    });
    await addMemberAsOperator(
      ctx,
      seeded.channel.id,
      (await getUser(ctx.kv, install.bot_user_id))!,
    );
  }
  return (await createAppToken(ctx, { appId: app.id, name: null, actor: null })).token;
}

/** One connection of an app, acking every envelope; when each message event's envelope came. */
async function connect(url: string, appToken: string) {
  const opened = await fetch(`${url}/api/slack/apps.connections.open`, {
    method: "POST",
    headers: { Authorization: `Bearer ${appToken}` },
  }).then((r) => r.json());
  if (!opened.ok) throw new Error(`apps.connections.open: ${JSON.stringify(opened)}`);
  const events = new Map<string, number>();
  const ws = new WebSocket(opened.url);
  await new Promise<void>((done, fail) => {
    ws.onmessage = (e) => {
      const at = now();
      const message = JSON.parse(e.data);
      if (message.type === "hello") return done();
      if (!message.envelope_id) return;
      ws.send(JSON.stringify({ envelope_id: message.envelope_id }));
      const ts = message.payload?.event?.ts;
      if (ts && !events.has(ts)) events.set(ts, at);
    };
    ws.onerror = () => fail(new Error("the connection failed"));
  });
  return {
    events,
    close: () =>
      new Promise<void>((done) => {
        ws.onclose = () => done();
        ws.close();
      }),
  };
}

/** Posts at a steady rate: each POST's round trip, sorted, and each answer's time by its ts. */
async function posts(proc: Proc, seeded: Seeded) {
  const to = targetOf(proc, seeded);
  const done = await onSchedule(POSTS, POSTS_PER_SECOND, async (i) => {
    const start = now();
    const res = await fetch(`${to.url}/api/v1/channels/${to.channelId}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${to.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ body: `socket ${i}` }),
    });
    const { data } = await res.json();
    const answered = now();
    return { ts: data.ts as string, answered, took: answered - start };
  });
  return { done, roundTrips: done.map((d) => d.took).sort((a, b) => a - b) };
}

/** From each post's answer to its envelope's arrival on `conn`, sorted (ms). */
async function envelopeLatencies(
  proc: Proc,
  seeded: Seeded,
  conn: { events: Map<string, number> },
) {
  const { done } = await posts(proc, seeded);
  const deadline = Date.now() + 30_000;
  while (!done.every((d) => conn.events.has(d.ts))) {
    if (Date.now() > deadline) throw new Error("not every envelope arrived");
    await sleep(20);
  }
  return done.map((d) => conn.events.get(d.ts)! - d.answered).sort((a, b) => a - b);
}

/** 1,000 idle connections on `proc`: memory each, and CPU while nothing happens. */
async function idleConnections(proc: Proc, tokens: string[]) {
  const cpuIdle = await cpuOver(proc, 10_000);
  const before = proc.rssMb();
  const conns = [];
  for (const token of tokens) {
    for (let i = 0; i < PER_APP; i++) conns.push(await connect(proc.url, token));
  }
  await sleep(3_000);
  const perConnKb = (proc.rssMb() - before) * 1024 / conns.length;
  return { conns, perConnKb, idleCpu: await cpuOver(proc, 10_000), cpuIdle };
}

/** The share of a core `proc` used over `ms` of the bench doing nothing. */
async function cpuOver(proc: Proc, ms: number): Promise<number> {
  const cpu0 = proc.cpuMs();
  await sleep(ms);
  return (proc.cpuMs() - cpu0) / ms;
}

export async function socketMode({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "socket-mode");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  const listener = await seedSocketApp(ctx, { seeded, name: "Listener", listening: true });
  const idle: string[] = [];
  for (let i = 0; i < IDLE_APPS; i++) {
    idle.push(await seedSocketApp(ctx, { seeded, name: `Idle ${i}`, listening: false }));
  }
  ctx.kv.close();
  const p50 = (xs: number[]) => percentile(xs, 0.5);
  const p99 = (xs: number[]) => percentile(xs, 0.99);
  return await using(
    startService(serviceEnv(kvPath, freePort())),
    (a) =>
      using(startService(serviceEnv(kvPath, freePort())), async (b) => {
        await post(targetOf(a, seeded), 0); // warm-up
        const quiet = (await posts(a, seeded)).roundTrips;
        const here = await connect(a.url, listener);
        // What waited while it was away (the warm-up and the quiet posts) comes first.
        while (here.events.size < POSTS + 1) await sleep(20);
        const local = await envelopeLatencies(a, seeded, here);
        await here.close();
        const there = await connect(b.url, listener);
        const cross = await envelopeLatencies(a, seeded, there);
        await there.close();
        const { conns, perConnKb, idleCpu, cpuIdle } = await idleConnections(a, idle);
        const busy = (await posts(a, seeded)).roundTrips;
        await Promise.all(conns.map((c) => c.close()));
        return [
          limitRow(
            `post answer -> envelope, one instance @${POSTS_PER_SECOND}/s p99 (p50 ${
              p50(local).toFixed(2)
            })`,
            p99(local),
            1.5,
            "ms",
          ),
          limitRow(
            `post answer -> envelope, across instances @${POSTS_PER_SECOND}/s p99 (p50 ${
              p50(cross).toFixed(1)
            })`,
            p99(cross),
            1000,
            "ms",
          ),
          limitRow(`${conns.length} idle connections: memory each`, perConnKb, 64, "KB"),
          infoRow(
            `CPU of a core over 10 s with nothing sent: ${conns.length} idle connections / none`,
            `${(idleCpu * 100).toFixed(2)} / ${(cpuIdle * 100).toFixed(2)} %`,
          ),
          infoRow(
            `POST p99 @${POSTS_PER_SECOND}/s: ${IDLE_APPS} apps connected / none`,
            `${p99(busy).toFixed(1)} / ${p99(quiet).toFixed(1)} ms`,
          ),
          limitRow(
            `POST p99 with ${IDLE_APPS} apps connected, as a share of none's`,
            p99(busy) / p99(quiet),
            1.5,
            "x",
          ),
        ];
      }),
  );
}
