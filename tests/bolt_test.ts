/**
 * An unmodified Slack Bolt app (examples/bolt_app.ts, `npm:@slack/bolt@5.1.0`) against real
 * service processes, two instances on one store: the app's Web API calls go to one, people run
 * commands and post on the other. It is registered from its Slack manifest and installed with the
 * admin CLI, as docs/apps.md shows; only its API URL, bot token and signing secret point here.
 */
import assert from "node:assert/strict";
import {
  actor,
  api,
  type ApiResponse,
  assertInvalid,
  signedInCookie,
  startServer,
  type TestServer,
  workspace,
} from "./harness.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp, uninstallApp } from "../domain/apps/installs.ts";
import { installDeliveries } from "../domain/apps/deliveries.ts";
import { addMemberAsOperator } from "../domain/channels/members.ts";
import { deactivateUser } from "../domain/people/people.ts";
import { keys } from "../kv/keys.ts";
import type { User } from "../core/types.ts";
import {
  cli,
  freePort,
  type Service,
  sharedStore,
  startBoltExample,
  startService,
  type Watched,
} from "./processes.ts";
import { connect } from "./sse_client.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { SKIPPED_WITHOUT_SDKS, slackSdks } from "./slack_sdks.ts";

/** Slack's Bolt and Web API client, loaded only where they run. */
async function slackSdk() {
  const [bolt, webApi] = await Promise.all([
    import("npm:@slack/bolt@5.1.0"),
    import("npm:@slack/web-api@8.2.0"),
  ]);
  return { bolt: bolt.default, WebClient: webApi.WebClient };
}
type Bolt = Awaited<ReturnType<typeof slackSdk>>["bolt"];

const MANIFEST = new URL("../examples/bolt_manifest.yaml", import.meta.url);

interface Said {
  author: string;
  type: string;
  body: string;
  thread_root_id: string | null;
  edited_at: string | null;
}

/** The channel's messages as `server` lists them, oldest first. */
async function timeline(s: TestServer, token: string, channel: string): Promise<Said[]> {
  const page: ApiResponse = await api(s, "GET", `/channels/${channel}/messages`, { token });
  const main = page.body.data as (Said & { author: { name: string }; id: string })[];
  const out: Said[] = [];
  for (const m of main.toReversed()) {
    out.push({ ...m, author: m.author.name });
    const thread = await api(s, "GET", `/channels/${channel}/messages?thread_root_id=${m.id}`, {
      token,
    });
    for (const r of thread.body.data) out.push({ ...r, author: r.author.name });
  }
  return out;
}

/** The example's manifest, its request URLs on `port` (the app is unchanged; its address is not). */
async function manifestOn(port: number): Promise<string> {
  const text = (await Deno.readTextFile(MANIFEST)).replaceAll(
    "localhost:3000",
    `127.0.0.1:${port}`,
  );
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(file, text);
  return file;
}

Deno.test({
  name: "bolt: the example app, unmodified, answers hello, a mention, /ship and /slow across two " +
    `instances${SKIPPED_WITHOUT_SDKS}`,
  ignore: !slackSdks,
  fn: exampleAppRuns,
});

async function exampleAppRuns() {
  const { WebClient } = await slackSdk();
  const store = await sharedStore();
  const services: Service[] = [];
  const port = freePort();
  let example: Watched | null = null;
  try {
    services.push(await startService(store.env), await startService(store.env));
    const [a, b] = services.map((s) => store.as(s));
    const w = await workspace(store.ctx);
    const general = w.team.general_channel_id;
    const app = await cli(store.env, "app:create", "--manifest", await manifestOn(port));
    const installed = await cli(store.env, "app:install", "--app", app.id, "--team", w.team.id);

    example = startBoltExample({
      SLACK_BOT_TOKEN: installed.access_token,
      SLACK_SIGNING_SECRET: app.signing_secret,
      SLACK_API_URL: `${b.url}/api/slack/`,
      APP_PORT: String(port),
    });
    await waitUntil(
      () => example!.output().includes("Bolt app listening"),
      60_000,
      "the Bolt app",
    ).catch((e) => {
      throw new Error(`${e.message}:\n${example!.output()}`);
    });

    // Once the app listens: the bot's joining is its first event.
    await cli(store.env, "member:add", "--channel", general, "--user", installed.bot_user_id);
    const listed = await api(a, "GET", "/commands", { token: w.member.token });
    assert.deepEqual(listed.body.data.map((c: { command: string }) => c.command), [
      "/approve",
      "/form",
      "/ship",
      "/slow",
    ]);

    const run = await api(a, "POST", `/channels/${general}/commands`, {
      token: w.admin.token,
      body: { command: "/ship", text: "prod" },
    });
    assert.equal(run.status, 200);
    assert.equal(run.body.data.status, "answered", JSON.stringify(run.body));
    assert.equal(run.body.data.ephemeral.text, "Shipping prod…");
    assert.equal(run.body.data.message, null);

    await api(a, "POST", `/channels/${general}/messages`, {
      token: w.member.token,
      body: { body: "hello there" },
    });
    const mention = await api(a, "POST", `/channels/${general}/messages`, {
      token: w.member.token,
      body: { body: "are you there @shipper" },
    });
    const expected = [
      { author: "shipper", body: ":rocket: Shipped prod.", edited: true },
      { author: "shipper", body: `<@${w.admin.user.id}> shipped prod.`, edited: false },
      { author: "shipper", body: `Hi <@${w.member.user.id}>!`, edited: false },
      { author: "shipper", body: `You called, <@${w.member.user.id}>?`, edited: false },
    ];
    let said: Said[] = [];
    await waitUntil(
      async () => {
        said = (await timeline(b, w.admin.token, general)).filter((m) => m.author === "shipper");
        return said.filter((m) => m.type === "standard").length >= expected.length;
      },
      15_000,
      "the app's four messages",
    ).catch((e) => {
      throw new Error(`${e.message}: ${JSON.stringify(said)}\n${example!.output()}`);
    });
    // What the app said: its bot's joining notice aside.
    const bodies = said.filter((m) => m.type === "standard");
    for (const e of expected) {
      const m = bodies.find((m) => m.body === e.body);
      assert.ok(m, `"${e.body}" in ${JSON.stringify(bodies.map((m) => m.body))}`);
      assert.equal(m.edited_at !== null, e.edited, e.body);
    }
    const reply = bodies.find((m) => m.body.startsWith("You called"))!;
    assert.equal(
      reply.thread_root_id,
      mention.body.data.id,
      "the mention is answered in its thread",
    );

    // The app's own messages come back to it as events (with its bot_id): it ignores them, so it
    // never answers itself.
    await new Promise((done) => setTimeout(done, 1_000));
    const again = (await timeline(b, w.admin.token, general)).filter((m) => m.author === "shipper");
    assert.equal(again.length, said.length, "no message answers the app's own");

    // A slow app: pending after 3 s, its late answer on the person's stream only.
    const stream = await connect(`${b.url}/api/v1/events/stream`, w.admin.token);
    try {
      const started = Date.now();
      const slow = await api(a, "POST", `/channels/${general}/commands`, {
        token: w.admin.token,
        body: { command: "/slow", text: "lunch" },
      });
      const waited = Date.now() - started;
      assert.equal(slow.body.data.status, "pending", JSON.stringify(slow.body));
      assert.ok(waited >= 2_900 && waited < 3_900, `answered pending after ${waited} ms`);
      await waitUntil(
        () => stream.events.some((e) => e.event === "message.ephemeral"),
        10_000,
        "the late answer on the stream",
      ).catch((e) => {
        throw new Error(`${e.message}: ${JSON.stringify(stream.events)}\n${example!.output()}`);
      });
      const late = stream.events.find((e) => e.event === "message.ephemeral")!;
      assert.equal(late.id, undefined, "an ephemeral message has no id: it can't be replayed");
      assert.deepEqual(late.data, {
        channel_id: general,
        text: "Done thinking about lunch.",
        blocks: null,
        app_id: app.id,
      });
    } finally {
      await stream.close();
    }
    const bodiesNow = (await timeline(a, w.admin.token, general)).map((m) => m.body);
    assert.ok(!bodiesNow.some((b) => b.includes("Done thinking")), "never in the timeline");
    assert.ok(!bodiesNow.some((b) => b.includes("Shipping prod…")), "nor the acknowledgement");

    // Slack's own client, a bad token: Slack's invalid_auth.
    const client = new WebClient("tcb_not-a-token", {
      slackApiUrl: `${b.url}/api/slack/`,
      retryConfig: { retries: 0 },
    });
    await assert.rejects(client.auth.test(), (e: { data: { error: string } }) => {
      assert.equal(e.data.error, "invalid_auth");
      return true;
    });

    const deliveries = await cli(store.env, "app:deliveries", "--app", app.id);
    assert.ok(deliveries.length >= 4, "the operator sees what the app was sent");
    assert.ok(
      deliveries.every((d: { succeeded: boolean }) => d.succeeded),
      JSON.stringify(deliveries.filter((d: { succeeded: boolean }) => !d.succeeded)) +
        example.output(),
    );
  } finally {
    await example?.kill();
    for (const s of services) await s.kill();
    await store.cleanup();
  }
}

/** A Bolt app in this process, as Slack's docs write one, with the hits it took. */
async function boltApp(
  bolt: Bolt,
  s: TestServer,
  { token, signingSecret, port }: { token: string; signingSecret: string; port: number },
) {
  const seen = { events: 0, responseUrls: [] as string[] };
  const app = new bolt.App({
    token,
    signingSecret,
    clientOptions: { slackApiUrl: `${s.url}/api/slack/` },
    logLevel: bolt.LogLevel.ERROR,
  });
  app.command("/ship", async ({ command, ack }) => {
    seen.responseUrls.push(command.response_url);
    await ack(`Shipping ${command.text}…`);
  });
  app.event("message", () => {
    seen.events++;
    return Promise.resolve();
  });
  await app.start(port);
  return { seen, stop: () => app.stop() };
}

/** An app made from a manifest whose command and events go to `url`, installed in `teamId`. */
async function installedApp(s: TestServer, { url, teamId }: { url: string; teamId: string }) {
  const manifest = {
    display_information: { name: "Shipper" },
    features: { slash_commands: [{ command: "/ship", url, description: "Ships" }] },
    oauth_config: { scopes: { bot: ["chat:write", "commands", "channels:history"] } },
    settings: { event_subscriptions: { request_url: url, bot_events: ["message.channels"] } },
  };
  const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest), null);
  const installed = await installApp(s.ctx, {
    app: made.app,
    teamId,
    scopes: ["commands", "messages:write", "messages:read"],
    channelId: null,
    approvedBy: null,
  });
  return { ...made, installed };
}

Deno.test({
  name: "bolt: what is refused: a wrong secret, a bot, a forged or spent response_url, an " +
    `uninstalled app, a deactivated person${SKIPPED_WITHOUT_SDKS}`,
  ignore: !slackSdks,
  fn: refusals,
});

async function refusals() {
  const { bolt, WebClient } = await slackSdk();
  const s = await startServer({}, { engine: true });
  const w = await workspace(s.ctx);
  const general = w.team.general_channel_id;
  const port = freePort();
  const url = `http://127.0.0.1:${port}/slack/events`;
  const made = await installedApp(s, { url, teamId: w.team.id });
  const bot = (await s.ctx.kv.get<User>(keys.user(made.installed.install.bot_user_id))).value!;
  await addMemberAsOperator(s.ctx, general, bot);
  await addMemberAsOperator(s.ctx, general, w.bot.user);
  const run = (token: string) =>
    api(s, "POST", `/channels/${general}/commands`, {
      token,
      body: { command: "/ship", text: "x" },
    });
  let app: Awaited<ReturnType<typeof boltApp>> | null = null;
  try {
    // An app holding another secret refuses what the service signs: the run fails, in words.
    const wrong = new bolt.App({
      token: made.installed.token.value,
      signingSecret: "not-the-one",
      logLevel: bolt.LogLevel.ERROR,
      clientOptions: { slackApiUrl: `${s.url}/api/slack/` },
    });
    wrong.command("/ship", async ({ ack }) => await ack("never"));
    await wrong.start(port);
    const refused = await run(w.admin.token);
    await wrong.stop();
    assert.equal(refused.status, 200);
    assert.equal(refused.body.data.status, "failed");
    assert.match(refused.body.data.error, /refused.*signing secret/);

    app = await boltApp(bolt, s, {
      token: made.installed.token.value,
      signingSecret: made.signingSecret,
      port,
    });
    assert.equal((await run(w.bot.token)).status, 403, "bots don't run commands");

    const answered = await run(w.admin.token);
    assert.equal(answered.body.data.status, "answered");
    const [responseUrl] = app.seen.responseUrls;
    const reply = (at: string) =>
      fetch(at, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ text: "later" }),
      }).then(async (res) => ({ status: res.status, body: await res.json() }));
    const forged = await reply(`${s.url}/responses/${"A".repeat(40)}`);
    assert.equal(forged.status, 404);
    assert.deepEqual([forged.body.ok, forged.body.error], [false, "expired_url"], "Slack's shape");
    for (let i = 0; i < 10; i++) {
      assert.equal((await reply(responseUrl)).status, 200, `use ${i + 1}`);
    }
    assert.equal((await reply(responseUrl)).status, 404, "the 11th use");

    // The Apps page shows admins what the app answers, where, and what it was sent lately.
    await api(s, "POST", `/channels/${general}/messages`, {
      token: w.admin.token,
      body: { body: "for the app" },
    });
    await waitUntil(() => app!.seen.events > 0, 5_000, "an event to the app");
    await waitUntil(
      async () =>
        (await installDeliveries(s.ctx, {
          install: made.installed.install,
          limit: 1,
          actor: null,
        })).length > 0,
      5_000,
      "its delivery recorded",
    );
    const cookie = await signedInCookie(s.url, s.ctx, w.admin.user.id);
    const page = await fetch(`${s.url}/settings/integrations/apps`, {
      headers: { Cookie: cookie },
    });
    const html = await page.text();
    assert.match(html, /<code>\/ship<\/code>/);
    assert.ok(html.includes(`<code>${url}</code>`), "the request URL");
    assert.match(html, /data-delivery-id=/);
    assert.match(html, /by the operator \(CLI\)/, "an operator's install names the operator");

    // The person leaves: their token ends, and with it their commands.
    const leaver = await actor(s.ctx, w.team, "Lee Leaver", "member");
    await deactivateUser(s.ctx, null, leaver.user.id);
    assert.equal((await run(leaver.token)).status, 401);

    // Uninstalled: its commands and events stop at once, its bot token is inactive.
    await uninstallApp(s.ctx, { teamId: w.team.id, appId: made.app.id, actor: null });
    const listed = await api(s, "GET", "/commands", { token: w.admin.token });
    assert.deepEqual(listed.body.data, []);
    const gone = await run(w.admin.token);
    assertInvalid(gone, "command");
    const before = app.seen.events;
    await api(s, "POST", `/channels/${general}/messages`, {
      token: w.admin.token,
      body: { body: "anyone there?" },
    });
    await new Promise((done) => setTimeout(done, 1_000));
    assert.equal(app.seen.events, before, "no event after the uninstall");
    const client = new WebClient(made.installed.token.value, {
      slackApiUrl: `${s.url}/api/slack/`,
      retryConfig: { retries: 0 },
    });
    await assert.rejects(client.auth.test(), (e: { data: { error: string } }) => {
      assert.equal(e.data.error, "account_inactive");
      return true;
    });
  } finally {
    await app?.stop();
    await s.close();
  }
}

Deno.test("bolt: with the platform off, commands, response URLs and the Web API are 404", async () => {
  const s = await startServer({ INTEGRATIONS_ENABLED: "false" });
  try {
    for (
      const [method, path] of [
        ["GET", "/api/v1/commands"],
        ["POST", "/api/v1/channels/x/commands"],
        ["POST", "/api/slack/auth.test"],
        ["POST", `/responses/${"A".repeat(40)}`],
      ]
    ) {
      const res = await fetch(`${s.url}${path}`, { method });
      await res.body?.cancel();
      assert.equal(res.status, 404, path);
    }
  } finally {
    await s.close();
  }
});
