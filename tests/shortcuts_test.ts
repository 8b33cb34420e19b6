/**
 * Shortcuts (decisions.md, "Shortcuts") with an unmodified Slack Bolt app
 * (`npm:@slack/bolt@5.1.0`): a global shortcut opens a modal with its trigger, as Slack's
 * starter templates start their flow, and a message shortcut hears the message and replies
 * through its `response_url`.
 */
import assert from "node:assert/strict";
import { actor, api, assertStatus, startServer, type TestServer, workspace } from "./harness.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { freePort } from "./processes.ts";
import { connect } from "./sse_client.ts";
import { post, waitUntil } from "./webhook_receivers.ts";
import { slackSdks } from "./slack_sdks.ts";

const plain = (text: string) => ({ type: "plain_text", text });
const MODAL = { type: "modal", callback_id: "ticket", title: plain("New ticket"), blocks: [] };

/** The app as Slack's templates write their shortcuts. */
async function shortcutApp(
  s: TestServer,
  { token, signingSecret, port }: { token: string; signingSecret: string; port: number },
) {
  const { default: bolt } = await import("npm:@slack/bolt@5.1.0");
  // deno-lint-ignore no-explicit-any
  const heard: any[] = [];
  const app = new bolt.App({
    token,
    signingSecret,
    clientOptions: { slackApiUrl: `${s.url}/api/slack/` },
    logLevel: bolt.LogLevel.ERROR,
  });
  app.shortcut("new_ticket", async ({ ack, shortcut, client }) => {
    await ack();
    heard.push(shortcut);
    await client.views.open({ trigger_id: shortcut.trigger_id, view: MODAL as never });
  });
  app.shortcut("file_it", async ({ ack, shortcut, respond }) => {
    await ack();
    heard.push(shortcut);
    const text = (shortcut as { message: { text: string } }).message.text;
    await respond({ text: `Filed: ${text}` });
  });
  await app.start(port);
  return { heard, stop: () => app.stop() };
}

async function installed(s: TestServer, url: string) {
  const w = await workspace(s.ctx);
  const manifest = {
    display_information: { name: "Tickets" },
    features: {
      shortcuts: [
        { name: "New ticket", type: "global", callback_id: "new_ticket", description: "Opens" },
        { name: "File it", type: "message", callback_id: "file_it", description: "Files" },
      ],
    },
    oauth_config: { scopes: { bot: ["commands", "chat:write"] } },
    settings: { interactivity: { is_enabled: true, request_url: url } },
  };
  const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest), null);
  const { token } = await installApp(s.ctx, {
    app: made.app,
    teamId: w.team.id,
    scopes: ["commands", "messages:write"],
    channelId: null,
    approvedBy: null,
  });
  return { w, appId: made.app.id, token: token.value, signingSecret: made.signingSecret };
}

Deno.test({
  name: "shortcuts: a global one opens a modal, a message one hears the message and replies",
  ignore: !slackSdks,
  fn: async () => {
    const s = await startServer();
    const port = freePort();
    let app: Awaited<ReturnType<typeof shortcutApp>> | null = null;
    try {
      const { w, appId, ...keys } = await installed(s, `http://127.0.0.1:${port}/slack/events`);
      app = await shortcutApp(s, { ...keys, port });
      const general = w.team.general_channel_id;

      const listed = await api(s, "GET", "/shortcuts", { token: w.member.token });
      assertStatus(listed, 200);
      assert.deepEqual(
        listed.body.data.map((x: { type: string; callback_id: string }) => [x.type, x.callback_id]),
        [["message", "file_it"], ["global", "new_ticket"]],
      );

      const stream = await connect(`${s.url}/api/v1/events/stream`, w.member.token);
      try {
        // Global: the trigger opens a modal for the person.
        const ran = await api(s, "POST", `/apps/${appId}/shortcuts/new_ticket`, {
          token: w.member.token,
        });
        assertStatus(ran, 200);
        assert.equal(ran.body.data.status, "acknowledged");
        await waitUntil(() => stream.events.some((e) => e.event === "view.opened"), 5_000, "modal");
        assert.equal(
          stream.events.find((e) => e.event === "view.opened")!.data.title.text,
          "New ticket",
        );
        const shortcut = app.heard[0];
        assert.equal(shortcut.type, "shortcut");
        assert.equal(shortcut.callback_id, "new_ticket");
        assert.equal(shortcut.user.id, w.member.user.id);

        // Message: the app hears the message and replies to the person through response_url.
        const message = await post(s, w.admin.token, general, "the build is red");
        const onMessage = await api(
          s,
          "POST",
          `/channels/${general}/messages/${message.id}/shortcuts`,
          {
            token: w.member.token,
            body: { app_id: appId, callback_id: "file_it" },
          },
        );
        assertStatus(onMessage, 200);
        await waitUntil(
          () => stream.events.some((e) => e.event === "message.ephemeral"),
          5_000,
          "the app's reply",
        );
        const reply = stream.events.find((e) => e.event === "message.ephemeral")!.data;
        assert.equal(reply.text, "Filed: the build is red");
        const action = app.heard[1];
        assert.equal(action.type, "message_action");
        assert.equal(action.channel.id, general);
        assert.equal(action.message.text, "the build is red");
        assert.match(action.response_url, /\/responses\//);
      } finally {
        await stream.close();
      }

      // What is refused: a bot, an unknown shortcut, a global one run on a message, another team.
      assertStatus(
        await api(s, "POST", `/apps/${appId}/shortcuts/new_ticket`, { token: w.bot.token }),
        403,
      );
      assertStatus(
        await api(s, "POST", `/apps/${appId}/shortcuts/nothing`, { token: w.member.token }),
        404,
      );
      const message = await post(s, w.admin.token, general, "again");
      assertStatus(
        await api(s, "POST", `/channels/${general}/messages/${message.id}/shortcuts`, {
          token: w.member.token,
          body: { app_id: appId, callback_id: "new_ticket" },
        }),
        404,
      );
      const stranger = (await workspace(s.ctx)).member.token;
      assertStatus(
        await api(s, "POST", `/apps/${appId}/shortcuts/new_ticket`, { token: stranger }),
        404,
      );
      const other = await actor(s.ctx, w.team, "Other", "member");
      assertStatus(await api(s, "GET", "/shortcuts", { token: other.token }), 200);
      assert.equal(app.heard.length, 2, "nothing refused reached the app");
    } finally {
      await app?.stop();
      await s.close();
    }
  },
});
