/**
 * Buttons and modals with an unmodified Slack Bolt app (`npm:@slack/bolt@5.1.0`): `/approve`
 * posts a button a person presses (the app replaces the message through its `response_url`; an
 * element the message doesn't hold is 422), and `/form` opens a modal only its person reads,
 * which refuses a blank field with the app's error and closes on a filled one.
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
import { addMemberAsOperator } from "../domain/channels/members.ts";
import { getUser } from "../kv/workspace.ts";
import { freePort } from "./processes.ts";
import { connect } from "./sse_client.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { slackSdks } from "./slack_sdks.ts";

const FORM = {
  type: "modal",
  callback_id: "form",
  title: { type: "plain_text", text: "Your name" },
  submit: { type: "plain_text", text: "Send" },
  notify_on_close: true,
  blocks: [{
    type: "input",
    block_id: "name",
    label: { type: "plain_text", text: "Name" },
    element: { type: "plain_text_input", action_id: "value" },
  }],
};

/** The app, as a Slack developer writes it: a button, a modal, what each answers. */
async function interactiveApp(
  s: TestServer,
  { token, signingSecret, port }: { token: string; signingSecret: string; port: number },
) {
  const { default: bolt } = await import("npm:@slack/bolt@5.1.0");
  const heard = { closed: 0, submitted: [] as string[] };
  const app = new bolt.App({
    token,
    signingSecret,
    clientOptions: { slackApiUrl: `${s.url}/api/slack/` },
    logLevel: bolt.LogLevel.ERROR,
  });
  app.command("/approve", async ({ ack, say }) => {
    await ack();
    await say({
      text: "Deploy to prod?",
      blocks: [
        { type: "section", text: { type: "mrkdwn", text: "Deploy to *prod*?" } },
        {
          type: "actions",
          block_id: "decide",
          elements: [{
            type: "button",
            action_id: "approve",
            text: { type: "plain_text", text: "Approve" },
            value: "prod",
          }],
        },
      ],
    });
  });
  app.action("approve", async ({ ack, respond, body }) => {
    await ack();
    await respond({ replace_original: true, text: `Approved by <@${body.user.id}>` });
  });
  app.command("/form", async ({ ack, client, body }) => {
    await ack();
    await client.views.open({ trigger_id: body.trigger_id, view: FORM as never });
  });
  app.view("form", async ({ ack, view }) => {
    const name = view.state.values.name.value.value ?? "";
    if (!name.trim()) {
      await ack({ response_action: "errors", errors: { name: "Please give a name." } });
      return;
    }
    heard.submitted.push(name);
    await ack();
  });
  app.view({ callback_id: "form", type: "view_closed" }, async ({ ack }) => {
    heard.closed++;
    await ack();
  });
  await app.start(port);
  return { heard, stop: () => app.stop() };
}

Deno.test({
  name: "bolt interactive: a button pressed, a modal refused then submitted, and closed",
  ignore: !slackSdks,
  fn: async () => {
    const s = await startServer();
    const port = freePort();
    const url = `http://127.0.0.1:${port}/slack/events`;
    let app: Awaited<ReturnType<typeof interactiveApp>> | null = null;
    try {
      const w = await workspace(s.ctx);
      const general = w.team.general_channel_id;
      const manifest = {
        display_information: { name: "Approver" },
        features: {
          slash_commands: [
            { command: "/approve", url, description: "Asks" },
            { command: "/form", url, description: "Opens a form" },
          ],
        },
        oauth_config: { scopes: { bot: ["commands", "chat:write"] } },
        settings: { interactivity: { is_enabled: true, request_url: url } },
      };
      const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest), null);
      const { install, token } = await installApp(s.ctx, {
        app: made.app,
        teamId: w.team.id,
        scopes: ["commands", "messages:write"],
        channelId: null,
        approvedBy: null,
      });
      await addMemberAsOperator(s.ctx, general, (await getUser(s.ctx.kv, install.bot_user_id))!);
      app = await interactiveApp(s, {
        token: token.value,
        signingSecret: made.signingSecret,
        port,
      });
      const run = (command: string, as = w.member.token) =>
        api(s, "POST", `/channels/${general}/commands`, { token: as, body: { command } });

      // A button: pressed as it is in the message, replaced by the app through response_url.
      assert.equal((await run("/approve")).body.data.status, "acknowledged");
      let asked: { id: string; blocks: unknown } | undefined;
      await waitUntil(
        async () => {
          const page = await api(s, "GET", `/channels/${general}/messages`, {
            token: w.member.token,
          });
          asked = page.body.data.find((m: { body: string }) => m.body.includes("Deploy to"));
          return !!asked;
        },
        5_000,
        "the app's question",
      );
      const press = (body: unknown) =>
        api(s, "POST", `/channels/${general}/messages/${asked!.id}/actions`, {
          token: w.member.token,
          body,
        });
      assertInvalid(await press({ action_id: "forged", block_id: "decide" }), "action_id");
      assertInvalid(await press({ action_id: "approve", value: "staging" }), "action_id");
      assertStatus(
        await api(s, "POST", `/channels/${general}/messages/${asked!.id}/actions`, {
          token: w.bot.token,
          body: { action_id: "approve" },
        }),
        404,
        "a bot outside the channel",
      );
      const pressed = await press({ action_id: "approve", block_id: "decide", value: "prod" });
      assertStatus(pressed, 200);
      assert.equal(pressed.body.data.status, "acknowledged");
      await waitUntil(
        async () => {
          const shown = await api(s, "GET", `/channels/${general}/messages/${asked!.id}`, {
            token: w.member.token,
          });
          return shown.body.data.body === `Approved by <@${w.member.user.id}>` &&
            shown.body.data.blocks === null;
        },
        5_000,
        "the message replaced",
      );
      assertInvalid(await press({ action_id: "approve", block_id: "decide" }), "action_id");

      // A modal: only its person reads it; a blank name is the app's error; a name closes it.
      const stream = await connect(`${s.url}/api/v1/events/stream`, w.member.token);
      let viewId = "";
      try {
        assert.equal((await run("/form")).body.data.status, "acknowledged");
        await waitUntil(() => stream.events.some((e) => e.event === "view.opened"), 5_000, "view");
        const opened = stream.events.find((e) => e.event === "view.opened")!;
        assert.equal(opened.id, undefined);
        viewId = opened.data.id;
      } finally {
        await stream.close();
      }
      const shown = await api(s, "GET", `/views/${viewId}`, { token: w.member.token });
      assertStatus(shown, 200);
      assert.equal(shown.body.data.title.text, "Your name");
      const other = await actor(s.ctx, w.team, "Someone else", "member");
      const hidden = await api(s, "GET", `/views/${viewId}`, { token: other.token });
      const unknown = await api(s, "GET", `/views/${crypto.randomUUID()}`, { token: other.token });
      assertStatus(hidden, 404);
      assert.deepEqual(hidden.body, unknown.body, "hidden reads as unknown");
      const submit = (value: string) =>
        api(s, "POST", `/views/${viewId}/submit`, {
          token: w.member.token,
          body: { values: { name: { value: { value } } } },
        });
      const blank = await submit("  ");
      assertInvalid(blank, "name");
      assert.deepEqual(blank.body.errors.name, ["Please give a name."]);
      const done = await submit("Ada");
      assertStatus(done, 200);
      assert.equal(done.body.data, null);
      assert.deepEqual(app.heard.submitted, ["Ada"]);
      assertStatus(await api(s, "GET", `/views/${viewId}`, { token: w.member.token }), 404);

      // Closed instead: the app hears view_closed, as the view asked.
      const again = await connect(`${s.url}/api/v1/events/stream`, w.member.token);
      try {
        await run("/form");
        await waitUntil(() => again.events.some((e) => e.event === "view.opened"), 5_000, "view");
        const id = again.events.find((e) => e.event === "view.opened")!.data.id;
        assertStatus(await api(s, "POST", `/views/${id}/close`, { token: w.member.token }), 204);
      } finally {
        await again.close();
      }
      await waitUntil(() => app!.heard.closed === 1, 5_000, "view_closed");
    } finally {
      await app?.stop();
      await s.close();
    }
  },
});
