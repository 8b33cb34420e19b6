/**
 * Issue 41, apps that listen: a command run's dispatch (request in, app request out), an event's
 * way to an app beside a webhook's to a subscription in the same run, and a Slack Web API call
 * against the REST call it maps to. Issue 54: `views.publish` of a Home for 1,000 people, and
 * what a global shortcut's and a press inside a view's dispatch add to a round trip.
 */
import type { Ctx } from "../../domain/context.ts";
import { createAppFromManifest } from "../../domain/apps/declared.ts";
import { installApp } from "../../domain/apps/installs.ts";
import { addMemberAsOperator } from "../../domain/channels/members.ts";
import { getUser } from "../../kv/workspace.ts";
import { createUser } from "../../domain/people/workspace.ts";
import { postMessage } from "../../domain/messages/messages.ts";
import { subjectOfPerson } from "../../domain/principals.ts";
import { freePort, type Proc, startService } from "../procs.ts";
import type { Receiver } from "../receiver.ts";
import { infoRow, limitRow, ratioRow, type Row } from "../report.ts";
import { openCtx, type Seeded, seedSubscriptions, seedWorkspace, serviceEnv } from "../seed.ts";
import { now, onSchedule, percentile } from "../pacing.ts";
import { measure } from "../wrk.ts";
import { type Bench, bestOf, scenarioDir, using } from "./context.ts";

const RUNS = 300;
const RUNS_PER_SECOND = 50;
const POSTS = 300;
const POSTS_PER_SECOND = 100;

/** The app's endpoint, in the bench process: when each command, press and event arrived. */
class AppEndpoint {
  /**
   * By a command's text, or a press's action_id or a shortcut's callback_id, each with how many
   * came before it under that name (`b3#0`, `bench_sc#12`).
   */
  readonly commands = new Map<string, number>();
  readonly #seen = new Map<string, number>();
  readonly events = new Map<string, number>();
  readonly #server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const text = await req.text();
    const at = now();
    if (req.headers.get("Content-Type")?.startsWith("application/x-www-form-urlencoded")) {
      const form = new URLSearchParams(text);
      const payload = form.get("payload");
      const parsed = payload
        ? JSON.parse(payload) as { actions?: { action_id: string }[]; callback_id?: string }
        : null;
      const name = parsed
        ? parsed.actions?.[0].action_id ?? parsed.callback_id ?? ""
        : form.get("text") ?? "";
      const n = this.#seen.get(name) ?? 0;
      this.#seen.set(name, n + 1);
      this.commands.set(`${name}#${n}`, at);
    } else {
      const ts = (JSON.parse(text) as { event?: { ts?: string } }).event?.ts;
      if (ts) this.events.set(ts, at);
    }
    return new Response(null, { status: 200 });
  });

  get url() {
    return `http://127.0.0.1:${this.#server.addr.port}/slack/events`;
  }

  stop = () => this.#server.shutdown();
}

/**
 * An app whose command, buttons and message events go to `url`, installed with its bot in the
 * channel, and a message of its bot's with a button for each press (action_id `b<i>`).
 */
async function seedApp(ctx: Ctx, seeded: Seeded, url: string): Promise<SeededApp> {
  const manifest = {
    display_information: { name: "Bench App" },
    features: {
      slash_commands: [{ command: "/bench", url, description: "Benches" }],
      shortcuts: [{ name: "Bench", type: "global", callback_id: SHORTCUT, description: "Benches" }],
      app_home: { home_tab_enabled: true },
    },
    oauth_config: { scopes: { bot: ["commands", "chat:write", "channels:history"] } },
    settings: {
      event_subscriptions: { request_url: url, bot_events: ["message.channels"] },
      interactivity: { is_enabled: true, request_url: url },
    },
  };
  const { app } = await createAppFromManifest(ctx, JSON.stringify(manifest), null);
  const { install, token } = await installApp(ctx, {
    app,
    teamId: seeded.subject.team_id,
    scopes: ["commands", "messages:write", "messages:read"],
    channelId: null,
    approvedBy: null,
  });
  const bot = (await getUser(ctx.kv, install.bot_user_id))!;
  await addMemberAsOperator(ctx, seeded.channel.id, bot);
  const button = (i: number) => ({
    type: "button",
    action_id: `b${i}`,
    text: { type: "plain_text", text: `Button ${i}` },
    value: "v",
  });
  const blocks = Array.from({ length: Math.ceil(RUNS / 25) }, (_, b) => ({
    type: "actions",
    block_id: `row${b}`,
    elements: Array.from({ length: 25 }, (_, i) => button(b * 25 + i)),
  }));
  const { message } = await postMessage(ctx, subjectOfPerson(bot), seeded.channel.id, {
    ok: true,
    value: { body: "Press", blocks },
  });
  return { appId: app.id, botToken: token.value, pressed: message.id };
}

const SHORTCUT = "bench_sc";

interface SeededApp {
  appId: string;
  botToken: string;
  /** A message of the bot's with a button for each press. */
  pressed: string;
}

/** The app's Home for the bench's person, with a button: its view's id, to press inside. */
async function publishHome(proc: Proc, seeded: Seeded, app: SeededApp): Promise<string> {
  const res = await fetch(`${proc.url}/api/slack/views.publish`, {
    method: "POST",
    headers: { Authorization: `Bearer ${app.botToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      user_id: seeded.subject.user_id,
      view: {
        type: "home",
        blocks: [{
          type: "actions",
          block_id: "home",
          elements: [{ type: "button", action_id: "go", text: { type: "plain_text", text: "Go" } }],
        }],
      },
    }),
  });
  const answer = await res.json();
  if (!answer.ok) throw new Error(`publish refused: ${JSON.stringify(answer)}`);
  return answer.view.id;
}

/** People a Home is published for, one after the other. */
const HOMES = 1_000;

/** An app with a Home tab, installed; its bot's token, and the people of the team to publish for. */
async function seedHomes(ctx: Ctx, seeded: Seeded): Promise<{ token: string; people: string[] }> {
  const manifest = {
    display_information: { name: "Bench Home" },
    features: { app_home: { home_tab_enabled: true } },
    oauth_config: { scopes: { bot: ["chat:write"] } },
  };
  const { app } = await createAppFromManifest(ctx, JSON.stringify(manifest), null);
  const { token } = await installApp(ctx, {
    app,
    teamId: seeded.subject.team_id,
    scopes: ["messages:write"],
    channelId: null,
    approvedBy: null,
  });
  const people: string[] = [];
  for (let i = 0; i < HOMES; i++) {
    const teamId = seeded.subject.team_id;
    people.push(
      (await createUser(ctx, { teamId, name: `p${i}`, type: "human", role: "member" }, null)).id,
    );
  }
  return { token: token.value, people };
}

/** Each person's Home published in turn: how long each publish takes, request to answer. */
async function publishes(proc: Proc, homes: { token: string; people: string[] }) {
  const view = {
    type: "home",
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: "Your *Home*" } },
      {
        type: "actions",
        elements: [{ type: "button", action_id: "go", text: { type: "plain_text", text: "Go" } }],
      },
    ],
  };
  const times: number[] = [];
  for (const id of homes.people) {
    const at = now();
    const res = await fetch(`${proc.url}/api/slack/views.publish`, {
      method: "POST",
      headers: { Authorization: `Bearer ${homes.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ user_id: id, view }),
    });
    if (!(await res.json()).ok) throw new Error(`publish for ${id} refused`);
    times.push(now() - at);
  }
  return times.sort((a, b) => a - b);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const authorized = (seeded: Seeded) => ({
  Authorization: `Bearer ${seeded.token}`,
  "Content-Type": "application/json",
});

/** What is dispatched: the i-th request's path and body, and the key the app records it by. */
interface Dispatched {
  path: string;
  body: (i: number) => unknown;
  key: (i: number) => string;
}

/** Requests at a steady rate: for each, from the request's start to its arrival at the app. */
async function dispatches(
  proc: Proc,
  { seeded, app, what }: { seeded: Seeded; app: AppEndpoint; what: Dispatched },
): Promise<number[]> {
  const started = await onSchedule(RUNS, RUNS_PER_SECOND, async (i) => {
    const at = now();
    const res = await fetch(`${proc.url}${what.path}`, {
      method: "POST",
      headers: authorized(seeded),
      body: JSON.stringify(what.body(i)),
    });
    const run = await res.json();
    if (run.data?.status !== "acknowledged") throw new Error(`${i}: ${JSON.stringify(run)}`);
    return [what.key(i), at] as const;
  });
  return started.map(([key, at]) => app.commands.get(key)! - at).sort((a, b) => a - b);
}

/**
 * A plain authenticated GET's whole round trip at the same rate: what reaching the service and
 * being answered costs here, which a command run's dispatch is measured beyond.
 */
async function roundTrips(proc: Proc, seeded: Seeded): Promise<number[]> {
  const times = await onSchedule(RUNS, RUNS_PER_SECOND, async () => {
    const at = now();
    const res = await fetch(`${proc.url}/api/v1/channels/${seeded.channel.id}`, {
      headers: authorized(seeded),
    });
    await res.body?.cancel();
    return now() - at;
  });
  return times.sort((a, b) => a - b);
}

/** Posts at a steady rate; from each answer to the webhook's arrival, and to the app event's. */
async function eventLatencies(
  proc: Proc,
  seeded: Seeded,
  to: { hook: Receiver; app: AppEndpoint },
) {
  const answered = await onSchedule(POSTS, POSTS_PER_SECOND, async (i) => {
    const res = await fetch(`${proc.url}/api/v1/channels/${seeded.channel.id}/messages`, {
      method: "POST",
      headers: authorized(seeded),
      body: JSON.stringify({ body: `event ${i}` }),
    });
    const { data } = await res.json();
    return { id: data.id as string, ts: data.ts as string, at: now() };
  });
  const deadline = Date.now() + 30_000;
  const arrived = () =>
    answered.every((p) => to.hook.arrivals.has(p.id) && to.app.events.has(p.ts));
  while (!arrived()) {
    if (Date.now() > deadline) throw new Error("not every event arrived");
    await new Promise((r) => setTimeout(r, 50));
  }
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  return {
    hook: sorted(answered.map((p) => to.hook.arrivals.get(p.id)![0] - p.at)),
    app: sorted(answered.map((p) => to.app.events.get(p.ts)! - p.at)),
  };
}

async function webApiAgainstRest(proc: Proc, seeded: Seeded) {
  const headers = { Authorization: `Bearer ${seeded.token}` };
  return await bestOf({
    rest: () => measure({ url: `${proc.url}/api/v1/channels/${seeded.channel.id}`, headers }),
    slack: () =>
      measure({
        url: `${proc.url}/api/slack/conversations.info?channel=${seeded.channel.id}`,
        headers,
      }),
  });
}

export async function apps({ root, receiver }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "apps");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  const app = new AppEndpoint();
  const seededApp = await seedApp(ctx, seeded, app.url);
  const pressed = seededApp.pressed;
  const channel = `/api/v1/channels/${seeded.channel.id}`;
  await seedSubscriptions(ctx, seeded, receiver.url, 1);
  const homes = await seedHomes(ctx, seeded);
  ctx.kv.close();
  receiver.reset();
  try {
    return await using(startService(serviceEnv(kvPath, freePort())), async (proc) => {
      const dispatch = await dispatches(proc, {
        seeded,
        app,
        what: {
          path: `${channel}/commands`,
          body: (i) => ({ command: "/bench", text: `run ${i}` }),
          key: (i) => `run ${i}#0`,
        },
      });
      const presses = await dispatches(proc, {
        seeded,
        app,
        what: {
          path: `${channel}/messages/${pressed}/actions`,
          body: (i) => ({ action_id: `b${i}`, value: "v" }),
          key: (i) => `b${i}#0`,
        },
      });
      const shortcuts = await dispatches(proc, {
        seeded,
        app,
        what: {
          path: `/api/v1/apps/${seededApp.appId}/shortcuts/${SHORTCUT}`,
          body: () => ({}),
          key: (i) => `${SHORTCUT}#${i}`,
        },
      });
      const home = await publishHome(proc, seeded, seededApp);
      const viewPresses = await dispatches(proc, {
        seeded,
        app,
        what: {
          path: `/api/v1/views/${home}/actions`,
          body: () => ({ action_id: "go", block_id: "home" }),
          key: (i) => `go#${i}`,
        },
      });
      const plain = await roundTrips(proc, seeded);
      const events = await eventLatencies(proc, seeded, { hook: receiver, app });
      const { rest, slack } = await webApiAgainstRest(proc, seeded);
      const published = await publishes(proc, homes);
      const p99 = (xs: number[]) => percentile(xs, 0.99);
      return [
        infoRow(
          `command run: request -> app p50 / p99 @${RUNS_PER_SECOND}/s`,
          `${percentile(dispatch, 0.5).toFixed(1)} / ${p99(dispatch).toFixed(1)} ms`,
        ),
        infoRow(
          "plain GET /channels/{id}: round trip p50 / p99",
          `${percentile(plain, 0.5).toFixed(1)} / ${p99(plain).toFixed(1)} ms`,
        ),
        limitRow(
          "command run: what dispatch adds to a round trip, p99",
          p99(dispatch) - p99(plain),
          5,
          "ms",
        ),
        infoRow(
          `button press: request -> app p50 / p99 @${RUNS_PER_SECOND}/s`,
          `${percentile(presses, 0.5).toFixed(1)} / ${p99(presses).toFixed(1)} ms`,
        ),
        limitRow(
          "button press: what dispatch adds to a round trip, p99",
          p99(presses) - p99(plain),
          5,
          "ms",
        ),
        infoRow(
          `global shortcut: request -> app p50 / p99 @${RUNS_PER_SECOND}/s`,
          `${percentile(shortcuts, 0.5).toFixed(1)} / ${p99(shortcuts).toFixed(1)} ms`,
        ),
        limitRow(
          "global shortcut: what dispatch adds to a round trip, p99",
          p99(shortcuts) - p99(plain),
          5,
          "ms",
        ),
        infoRow(
          `press inside a Home view: request -> app p50 / p99 @${RUNS_PER_SECOND}/s`,
          `${percentile(viewPresses, 0.5).toFixed(1)} / ${p99(viewPresses).toFixed(1)} ms`,
        ),
        limitRow(
          "press inside a view: what dispatch adds to a round trip, p99",
          p99(viewPresses) - p99(plain),
          5,
          "ms",
        ),
        infoRow(
          `answer->webhook arrival @${POSTS_PER_SECOND}/s p99`,
          `${p99(events.hook).toFixed(1)} ms`,
        ),
        limitRow(
          `answer->app event arrival @${POSTS_PER_SECOND}/s p99 (webhook's +0.5 ms)`,
          p99(events.app),
          Math.round((p99(events.hook) + 0.5) * 10) / 10,
          "ms",
        ),
        ratioRow("Web API conversations.info vs REST GET /channels/{id}", slack, rest, 1 / 1.2),
        infoRow(
          `views.publish for ${HOMES} people, one after another: mean / p99`,
          `${mean(published).toFixed(2)} / ${p99(published).toFixed(1)} ms`,
        ),
        limitRow(
          "views.publish: what each adds to a plain GET's round trip, mean",
          mean(published) - mean(plain),
          2,
          "ms",
        ),
      ];
    });
  } finally {
    await app.stop();
  }
}
