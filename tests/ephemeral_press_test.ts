/**
 * Buttons in ephemeral messages (decisions.md, "Slack's shapes"), with an unmodified Slack Bolt
 * app: a command's ephemeral answer holds a button, its person presses it within 30 minutes, and
 * the app answers through the press's `response_url`; nobody else can press it, and what it said
 * is sealed in the store.
 */
import assert from "node:assert/strict";
import {
  actor,
  api,
  assertInvalid,
  assertStatus,
  startServer,
  type TestServer,
  workspace,
} from "./harness.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { keys } from "../kv/keys.ts";
import { freePort } from "./processes.ts";
import { connect } from "./sse_client.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { slackSdks } from "./slack_sdks.ts";

async function chooserApp(
  s: TestServer,
  { token, signingSecret, port }: { token: string; signingSecret: string; port: number },
) {
  const { default: bolt } = await import("npm:@slack/bolt@5.1.0");
  // deno-lint-ignore no-explicit-any
  const pressed: any[] = [];
  const app = new bolt.App({
    token,
    signingSecret,
    clientOptions: { slackApiUrl: `${s.url}/api/slack/` },
    logLevel: bolt.LogLevel.ERROR,
  });
  app.command("/choose", async ({ ack }) => {
    await ack({
      text: "Only you see this",
      blocks: [{
        type: "actions",
        elements: [{
          type: "button",
          action_id: "secret_yes",
          text: { type: "plain_text", text: "Yes" },
          value: "yes",
        }],
      }],
    });
  });
  app.action("secret_yes", async ({ ack, body, respond }) => {
    await ack();
    pressed.push(body);
    await respond({ text: "You chose yes" });
  });
  await app.start(port);
  return { pressed, stop: () => app.stop() };
}

Deno.test({
  name: "ephemeral presses: its person presses an app's ephemeral button; nobody else can",
  ignore: !slackSdks,
  fn: async () => {
    const s = await startServer();
    const port = freePort();
    const url = `http://127.0.0.1:${port}/slack/events`;
    let app: Awaited<ReturnType<typeof chooserApp>> | null = null;
    try {
      const w = await workspace(s.ctx);
      const general = w.team.general_channel_id;
      const manifest = {
        display_information: { name: "Chooser" },
        features: { slash_commands: [{ command: "/choose", url, description: "Asks" }] },
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
      app = await chooserApp(s, { token: token.value, signingSecret: made.signingSecret, port });

      const run = await api(s, "POST", `/channels/${general}/commands`, {
        token: w.member.token,
        body: { command: "/choose" },
      });
      assert.equal(run.body.data.status, "answered");
      const id = run.body.data.ephemeral.id;
      assert.ok(id, "an app's ephemeral message with a button has an id");
      const sealed = await s.ctx.kv.get(keys.pressableEphemeral(id));
      assert.ok(sealed.value, "kept while it may be pressed");
      assert.ok(
        !JSON.stringify(sealed.value).includes("Only you see this"),
        "what it says is sealed",
      );

      const press = (token: string, body: unknown) =>
        api(s, "POST", `/ephemeral/${id}/actions`, { token, body });
      const other = await actor(s.ctx, w.team, "Someone else", "member");
      assertStatus(await press(other.token, { action_id: "secret_yes" }), 404);
      assertInvalid(await press(w.member.token, { action_id: "no_such" }), "action_id");

      const stream = await connect(`${s.url}/api/v1/events/stream`, w.member.token);
      try {
        const done = await press(w.member.token, { action_id: "secret_yes", value: "yes" });
        assertStatus(done, 200);
        assert.equal(done.body.data.status, "acknowledged");
        await waitUntil(
          () => stream.events.some((e) => e.data?.text === "You chose yes"),
          5_000,
          "the app's answer through response_url",
        );
      } finally {
        await stream.close();
      }
      const body = app.pressed[0];
      assert.equal(body.container.is_ephemeral, true);
      assert.equal(body.container.channel_id, general);
      assert.equal(body.actions[0].value, "yes");
    } finally {
      await app?.stop();
      await s.close();
    }
  },
});
