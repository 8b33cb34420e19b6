/**
 * App Home (decisions.md, "App Home") with an unmodified Slack Bolt app
 * (`npm:@slack/bolt@5.1.0`): a person opens the app's Home, the app hears `app_home_opened` and
 * publishes one with `views.publish`, the person sees it, and a button pressed in it opens a
 * modal, as Slack's starter template does.
 */
import assert from "node:assert/strict";
import {
  actor,
  api,
  assertInvalid,
  assertStatus,
  slackApi,
  startServer,
  type TestServer,
  workspace,
} from "./harness.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { freePort } from "./processes.ts";
import { connect } from "./sse_client.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { slackSdks } from "./slack_sdks.ts";

const plain = (text: string) => ({ type: "plain_text", text });

const home = (opened: number) => ({
  type: "home",
  blocks: [
    { type: "section", text: { type: "mrkdwn", text: `Opened *${opened}* times` } },
    {
      type: "actions",
      elements: [{ type: "button", action_id: "open_modal", text: plain("Open a modal") }],
    },
  ],
});

const MODAL = { type: "modal", callback_id: "from_home", title: plain("From Home"), blocks: [] };

/** The app as Slack's starter template writes its Home: published on every open. */
async function homeApp(
  s: TestServer,
  { token, signingSecret, port }: { token: string; signingSecret: string; port: number },
) {
  const { default: bolt } = await import("npm:@slack/bolt@5.1.0");
  // deno-lint-ignore no-explicit-any
  const opened: any[] = [];
  const published = { count: 0 };
  const app = new bolt.App({
    token,
    signingSecret,
    clientOptions: { slackApiUrl: `${s.url}/api/slack/` },
    logLevel: bolt.LogLevel.ERROR,
  });
  app.event("app_home_opened", async ({ event, client }) => {
    opened.push(event);
    await client.views.publish({ user_id: event.user, view: home(opened.length) as never });
    published.count++;
  });
  app.action("open_modal", async ({ ack, body, client }) => {
    await ack();
    await client.views.open({
      trigger_id: (body as { trigger_id: string }).trigger_id,
      view: MODAL as never,
    });
  });
  await app.start(port);
  return { opened, published, stop: () => app.stop() };
}

async function installed(s: TestServer, { url, homeTab }: { url: string; homeTab: boolean }) {
  const w = await workspace(s.ctx);
  const manifest = {
    display_information: { name: homeTab ? "Homely" : "Homeless" },
    features: { app_home: { home_tab_enabled: homeTab, messages_tab_enabled: true } },
    oauth_config: { scopes: { bot: ["chat:write"] } },
    settings: {
      event_subscriptions: { request_url: url, bot_events: ["app_home_opened"] },
      interactivity: { is_enabled: true, request_url: url },
    },
  };
  const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest), null);
  const { token } = await installApp(s.ctx, {
    app: made.app,
    teamId: w.team.id,
    scopes: ["messages:write"],
    channelId: null,
    approvedBy: null,
  });
  return { w, appId: made.app.id, token: token.value, signingSecret: made.signingSecret };
}

Deno.test({
  name: "app home: opened by a person, published by the app, pressed to open a modal",
  ignore: !slackSdks,
  fn: async () => {
    const s = await startServer({}, { engine: true });
    const port = freePort();
    const url = `http://127.0.0.1:${port}/slack/events`;
    let app: Awaited<ReturnType<typeof homeApp>> | null = null;
    try {
      const { w, appId, ...keys } = await installed(s, { url, homeTab: true });
      app = await homeApp(s, { ...keys, port });
      let opens = 0;
      const open = (token = w.member.token) => {
        if (token === w.member.token) opens++;
        return api(s, "GET", `/apps/${appId}/home`, { token });
      };

      // The first open: nothing published yet; the app hears it and publishes within Slack's 3
      // seconds, and the person sees that Home at once.
      const first = await open();
      assertStatus(first, 200);
      assert.equal(first.body.data?.type, "home", JSON.stringify(first.body));
      assert.match(JSON.stringify(first.body.data.blocks), /Opened \*1\*/);
      await waitUntil(() => app!.opened.length === 1, 5_000, "app_home_opened");
      const heard = app.opened[0];
      assert.equal(heard.type, "app_home_opened");
      assert.equal(heard.user, w.member.user.id);
      assert.equal(heard.tab, "home");
      assert.equal(heard.view, undefined);
      const dm = await api(s, "GET", `/channels/${heard.channel}`, { token: w.member.token });
      assertStatus(dm, 200);
      assert.equal(dm.body.data.is_direct, true, "the channel is the person's DM with the bot");

      await waitUntil(() => app!.published.count === 1, 5_000, "the app's publish");
      const shown = await open();
      assert.equal(shown.body.data.type, "home");
      assert.equal(shown.body.data.title, null);
      assert.match(JSON.stringify(shown.body.data.blocks), /Opened \*1\*/);
      const homeId = shown.body.data.id;
      await waitUntil(() => app!.published.count === 2, 5_000, "the second publish");
      assert.equal(app.opened[1].view.id, homeId, "the event carries the Home published");
      const again = await api(s, "GET", `/views/${homeId}`, { token: w.member.token });
      assert.match(JSON.stringify(again.body.data.blocks), /Opened \*2\*/, "republished in place");
      assert.notEqual(again.body.data.hash, shown.body.data.hash);

      // The Home's button opens a modal: the press's trigger is for a new modal.
      const stream = await connect(`${s.url}/api/v1/events/stream`, w.member.token);
      try {
        const pressed = await api(s, "POST", `/views/${homeId}/actions`, {
          token: w.member.token,
          body: { action_id: "open_modal" },
        });
        assertStatus(pressed, 200);
        assert.equal(pressed.body.data.status, "acknowledged");
        await waitUntil(
          () => stream.events.some((e) => e.event === "view.opened"),
          5_000,
          "the modal",
        );
        const modal = stream.events.find((e) => e.event === "view.opened")!.data;
        assert.equal(modal.title.text, "From Home");
        assert.equal(modal.root_view_id, modal.id, "a modal of its own, not pushed on the Home");
      } finally {
        await stream.close();
      }
      assertInvalid(
        await api(s, "POST", `/views/${homeId}/submit`, {
          token: w.member.token,
          body: { values: {} },
        }),
        "view",
      );

      // Only its person sees a Home; bots and other teams don't open it.
      const other = await actor(s.ctx, w.team, "Someone else", "member");
      assertStatus(await api(s, "GET", `/views/${homeId}`, { token: other.token }), 404);
      assertStatus(await open(w.bot.token), 403);
      assertStatus(await open((await workspace(s.ctx)).member.token), 404);

      // views.publish as Slack answers it: a stale hash, someone unknown.
      const publish = (args: Record<string, unknown>) =>
        slackApi(s, keys.token, { method: "views.publish", args });
      // Once the app published for every open, the Home stays as it is.
      await waitUntil(() => app!.published.count === opens, 5_000, "the app's publishes");
      const current =
        (await api(s, "GET", `/views/${homeId}`, { token: w.member.token })).body.data;
      const stale = await publish({ user_id: w.member.user.id, hash: "1.stale", view: home(9) });
      assert.deepEqual([stale.ok, stale.error], [false, "hash_conflict"]);
      const fresh = await publish({ user_id: w.member.user.id, hash: current.hash, view: home(9) });
      assert.equal(fresh.ok, true);
      assert.equal(fresh.view.id, homeId);
      const nobody = await publish({ user_id: crypto.randomUUID(), view: home(1) });
      assert.deepEqual([nobody.ok, nobody.error], [false, "user_not_found"]);
      const modalOne = await publish({ user_id: w.member.user.id, view: MODAL });
      assert.deepEqual([modalOne.ok, modalOne.error], [false, "invalid_arguments"]);
    } finally {
      await app?.stop();
      await s.close();
    }
  },
});

Deno.test("app home: an app without a Home tab has none to open or publish", async () => {
  const s = await startServer();
  try {
    const { w, appId, token } = await installed(s, {
      url: "http://127.0.0.1:9/slack/events",
      homeTab: false,
    });
    assertStatus(await api(s, "GET", `/apps/${appId}/home`, { token: w.member.token }), 404);
    const refused = await fetch(`${s.url}/api/slack/views.publish`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ user_id: w.member.user.id, view: home(1) }),
    }).then((r) => r.json());
    assert.deepEqual([refused.ok, refused.error], [false, "not_enabled"]);
  } finally {
    await s.close();
  }
});
