/**
 * Socket Mode (decisions.md, "Apps without a public URL"), with clients nobody here wrote: the
 * example Bolt app (`npm:@slack/bolt@5.1.0`) with `socketMode: true`, unmodified but for its
 * tokens and API URL, and Slack's own `@slack/socket-mode` client counting what arrives while it
 * is away, while the instance it is connected to is SIGKILLed, and when two share one token.
 */
import assert from "node:assert/strict";
import { api, type ApiResponse, assertInvalid, type TestServer, workspace } from "./harness.ts";
import {
  cli,
  type Service,
  sharedStore,
  startBoltExample,
  startService,
  type Watched,
} from "./processes.ts";
import { connect } from "./sse_client.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { SKIPPED_WITHOUT_SDKS, slackSdks } from "./slack_sdks.ts";
import { rawSocket } from "./socket_client.ts";

const MANIFEST = new URL("../examples/bolt_socket_manifest.yaml", import.meta.url).pathname;

/** An app in Socket Mode from the example's manifest, installed, with an app-level token. */
async function socketApp(env: Record<string, string>, { teamId, channelId }: {
  teamId: string;
  channelId: string;
}) {
  const app = await cli(env, "app:create", "--manifest", MANIFEST);
  const installed = await cli(env, "app:install", "--app", app.id, "--team", teamId);
  const token = await cli(env, "app:token", "--app", app.id);
  await cli(env, "member:add", "--channel", channelId, "--user", installed.bot_user_id);
  return { app, installed, appToken: token.token as string };
}

const bodies = async (
  s: TestServer,
  token: string,
  channel: string,
) => ((await api(s, "GET", `/channels/${channel}/messages?limit=100`, { token })).body.data as {
  author: { name: string };
  body: string;
  id: string;
}[]);

Deno.test({
  name:
    `socket mode: the Bolt example with socketMode answers hello, a mention, /ship, a button and a form${SKIPPED_WITHOUT_SDKS}`,
  ignore: !slackSdks,
  async fn() {
    const store = await sharedStore();
    const services: Service[] = [];
    let bolt: Watched | null = null;
    try {
      services.push(await startService(store.env), await startService(store.env));
      const [a, b] = services.map((s) => store.as(s));
      const w = await workspace(store.ctx);
      const general = w.team.general_channel_id;
      const { installed, appToken } = await socketApp(store.env, {
        teamId: w.team.id,
        channelId: general,
      });
      bolt = startBoltExample({
        SLACK_BOT_TOKEN: installed.access_token,
        SLACK_APP_TOKEN: appToken,
        SLACK_API_URL: `${a.url}/api/slack/`,
      });
      await waitUntil(() => bolt!.output().includes("connected in Socket Mode"), 60_000, "Bolt")
        .catch((e) => {
          throw new Error(`${e.message}:\n${bolt!.output()}`);
        });

      // Commands and presses go to the connection on instance a, wherever they are made: made
      // through b, they are relayed through the store.
      const run = (command: string, text = "", on = a) =>
        api(on, "POST", `/channels/${general}/commands`, {
          token: w.admin.token,
          body: { command, text },
        });
      const ship = await run("/ship", "prod");
      assert.equal(ship.body.data.status, "answered", JSON.stringify(ship.body));
      assert.equal(ship.body.data.ephemeral.text, "Shipping prod…");
      const relayed = await run("/ship", "staging", b);
      assert.equal(relayed.body.data.status, "answered", JSON.stringify(relayed.body));
      assert.equal(relayed.body.data.ephemeral.text, "Shipping staging…");
      // Events of posts made through instance b reach the app connected to a.
      await api(b, "POST", `/channels/${general}/messages`, {
        token: w.member.token,
        body: { body: "hello there" },
      });
      const mention = await api(b, "POST", `/channels/${general}/messages`, {
        token: w.member.token,
        body: { body: "are you there @shipper" },
      });
      const expected = [
        ":rocket: Shipped prod.",
        `<@${w.admin.user.id}> shipped prod.`,
        `Hi <@${w.member.user.id}>!`,
      ];
      await waitUntil(
        async () => {
          const said = (await bodies(b, w.admin.token, general)).map((m) => m.body);
          return expected.every((e) => said.includes(e));
        },
        15_000,
        "the app's four messages",
      ).catch(async (e) => {
        const said = (await bodies(b, w.admin.token, general)).map((m) => m.body);
        throw new Error(`${e.message}: ${JSON.stringify(said)}\n${bolt!.output()}`);
      });
      // The mention is answered in its thread.
      await waitUntil(
        async () => {
          const thread = await api(
            b,
            "GET",
            `/channels/${general}/messages?thread_root_id=${mention.body.data.id}`,
            {
              token: w.admin.token,
            },
          );
          return thread.body.data.some((m: { body: string }) =>
            m.body === `You called, <@${w.member.user.id}>?`
          );
        },
        15_000,
        "the answer in the mention's thread",
      );

      assert.equal((await run("/approve", "v2")).body.data.status, "acknowledged");
      let asked: { id: string } | undefined;
      await waitUntil(
        async () => {
          asked = (await bodies(a, w.admin.token, general)).find((m) => m.body === "Approve v2?");
          return !!asked;
        },
        5_000,
        "the question",
      );
      const pressed = await api(b, "POST", `/channels/${general}/messages/${asked!.id}/actions`, {
        token: w.admin.token,
        body: { action_id: "approve", block_id: "decision" },
      });
      assert.equal(pressed.body.data.status, "acknowledged", JSON.stringify(pressed.body));
      await waitUntil(
        async () => {
          const m = await api(a, "GET", `/channels/${general}/messages/${asked!.id}`, {
            token: w.admin.token,
          });
          return m.body.data.body === `Approved by <@${w.admin.user.id}>.`;
        },
        5_000,
        "the message replaced",
      );

      const stream = await connect(`${a.url}/api/v1/events/stream`, w.admin.token);
      let viewId = "";
      try {
        assert.equal((await run("/form")).body.data.status, "acknowledged");
        await waitUntil(() => stream.events.some((e) => e.event === "view.opened"), 5_000, "view");
        viewId = stream.events.find((e) => e.event === "view.opened")!.data.id;
      } finally {
        await stream.close();
      }
      const submit = (value: string): Promise<ApiResponse> =>
        api(a, "POST", `/views/${viewId}/submit`, {
          token: w.admin.token,
          body: { values: { name: { value: { value } } } },
        });
      const blank = await submit(" ");
      assertInvalid(blank, "name");
      assert.deepEqual(blank.body.errors.name, ["Please give your name."]);
      const done = await submit("Ada");
      assert.equal(done.status, 200, JSON.stringify(done.body));
      await waitUntil(() => bolt!.output().includes("Hello, Ada."), 5_000, "the submission");
    } finally {
      await bolt?.kill();
      for (const s of services) await s.kill();
      await store.cleanup();
    }
  },
});

const METRICS_TOKEN = "metrics-token-0123456789";

const metricsOf = (url: string) =>
  fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })
    .then((r) => r.text());

/** Slack's Socket Mode client, counting the events it is sent by their event ids. */
async function countingClient(url: string, appToken: string) {
  const { SocketModeClient } = await import("npm:@slack/socket-mode@3.1.0");
  const client = new SocketModeClient({
    appToken,
    clientOptions: { slackApiUrl: `${url}/api/slack/` },
    logLevel: "error" as never,
  });
  const seen: string[] = [];
  const retried: number[] = [];
  // Bolt listens the same way: every envelope, acked.
  client.on("slack_event", async ({ ack, body, type, retry_num }) => {
    await ack();
    if (type !== "events_api") return;
    seen.push(body.event_id);
    if (retry_num) retried.push(retry_num);
  });
  await client.start();
  return { client, seen, retried };
}

Deno.test({
  name:
    `socket mode: nothing is lost while the app is away, its instance SIGKILLed, or two share a token${SKIPPED_WITHOUT_SDKS}`,
  ignore: !slackSdks,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const store = await sharedStore();
    const services: Service[] = [];
    const clients: Awaited<ReturnType<typeof countingClient>>[] = [];
    try {
      const env = { ...store.env, METRICS_TOKEN };
      services.push(await startService(env), await startService(env));
      const [a, b] = services.map((s) => store.as(s));
      const w = await workspace(store.ctx);
      const general = w.team.general_channel_id;
      const { app, appToken } = await socketApp(store.env, {
        teamId: w.team.id,
        channelId: general,
      });
      const posted: string[] = [];
      const post = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const res = await api(a, "POST", `/channels/${general}/messages`, {
            token: w.member.token,
            body: { body: `event ${posted.length}` },
          });
          assert.equal(res.status, 201);
          posted.push(res.body.data.id);
        }
      };
      const union = () => new Set(clients.flatMap((c) => c.seen));
      const allArrive = (what: string) =>
        waitUntil(() => union().size >= posted.length, 20_000, what).catch((e) => {
          throw new Error(`${e.message}: ${union().size} of ${posted.length}`);
        });

      // Connected to b, the events of posts made through a.
      clients.push(await countingClient(b.url, appToken));
      await post(5);
      await allArrive("5 events across instances");
      // Any instance's /metrics counts the connection on b, and nothing left waiting.
      const held = new RegExp(
        `^socket_mode_connections\\{app_id="${app.id}",instance="[^"]+"\\} 1$`,
        "m",
      );
      const none = new RegExp(`^socket_mode_backlog\\{app_id="${app.id}"\\} 0$`, "m");
      await waitUntil(
        async () => {
          const text = await metricsOf(a.url);
          return held.test(text) && none.test(text);
        },
        10_000,
        "/metrics counting the connection, with no backlog",
      );

      // Away: the events wait, and all come when it is back.
      await clients[0].client.disconnect();
      await post(20);
      // A command is not kept: it fails at once, on either instance.
      for (const on of [a, b]) {
        const away = await api(on, "POST", `/channels/${general}/commands`, {
          token: w.admin.token,
          body: { command: "/ship", text: "nowhere" },
        });
        assert.equal(away.body.data.status, "failed", JSON.stringify(away.body));
        assert.match(JSON.stringify(away.body.data), /the app is not connected/);
      }
      // Its operator sees it away, with the 20 waiting (and any ack the disconnect cut short).
      await waitUntil(
        async () => {
          const { socket_mode } = await cli(store.env, "app:deliveries", "--app", app.id);
          return socket_mode.connections.length === 0 && socket_mode.backlog >= 20 &&
            socket_mode.oldest_pending_age_seconds > 0;
        },
        10_000,
        "app:deliveries showing the app away, 20 events waiting",
      );
      clients.push(await countingClient(b.url, appToken));
      await allArrive("20 events that waited");

      // Its instance SIGKILLed while posts go through the other: all arrive once it is back.
      await services[1].kill();
      await post(20);
      services[1] = await startService(env);
      clients.push(await countingClient(services[1].url, appToken));
      await allArrive("20 events past a SIGKILL");

      // Two processes on one token: hello says so, and they split the events, missing none.
      // Acking nothing: what it is sent goes again to the others once it closes.
      const raw = await rawSocket(a.url, appToken, { ack: false });
      const [first] = raw.got;
      assert.equal(first.type, "hello");
      assert.ok(first.num_connections! >= 2, JSON.stringify(first));
      assert.equal(first.connection_info!.app_id !== "", true);
      await raw.close();
      // On one instance, posted through the other: the connections there take turns.
      clients.push(await countingClient(services[1].url, appToken));
      const [third, fourth] = clients.slice(2);
      const before = [third.seen.length, fourth.seen.length];
      await post(20);
      await allArrive("20 events on two connections");
      const got = [third.seen.slice(before[0]), fourth.seen.slice(before[1])];
      assert.ok(
        got[0].length > 0 && got[1].length > 0,
        `both take some: ${got.map((g) => g.length)}`,
      );
      const overlap = got[0].filter((id) => got[1].includes(id));
      assert.deepEqual(overlap, [], "no event went to both");
      const ids = union();
      const listed = await store.ctx.kv.list({ prefix: ["socket_events"] });
      let left = 0;
      for await (const _ of listed) left++;
      await waitUntil(
        async () => {
          left = 0;
          for await (const _ of store.ctx.kv.list({ prefix: ["socket_events"] })) left++;
          return left === 0;
        },
        10_000,
        "nothing left pending",
      ).catch((e) => {
        throw new Error(`${e.message}: ${left} pending, ${ids.size} seen of ${posted.length}`);
      });
    } finally {
      for (const c of clients) await c.client.disconnect().catch(() => {});
      for (const s of services) await s.kill();
      await store.cleanup();
    }
  },
});
