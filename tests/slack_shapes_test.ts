/**
 * Slack's shapes where apps rely on them (decisions.md, "Slack's shapes"): what the Web API answers,
 * as Slack's clients test for it, and what an edit's and a delete's events carry.
 */
import assert from "node:assert/strict";
import { api, assertStatus, slackApi, startServer, workspace } from "./harness.ts";
import { post, receiver, waitUntil } from "./webhook_receivers.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { addMemberAsOperator } from "../domain/channels/members.ts";
import { getUser } from "../kv/workspace.ts";
import { subjectOfPerson } from "../domain/principals.ts";
import { issueAnswerWays } from "../domain/apps/responses.ts";
import { openView } from "../domain/apps/views.ts";
import { createToken } from "../domain/people/tokens.ts";

Deno.test("slack shapes: #name for a channel; chat.update of a deleted message is message_not_found", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const channel = w.team.general_channel_id;
    const call = (method: string, args: Record<string, unknown>) =>
      slackApi(s, w.admin.token, { method, args });
    // `#name` wherever Slack takes a channel's id.
    const named = await call("chat.postMessage", { channel: "#general", text: "by name" });
    assert.deepEqual([named.ok, named.channel], [true, channel]);
    const unknown = await call("chat.postMessage", { channel: "#nowhere", text: "x" });
    assert.equal(unknown.error, "channel_not_found");
    const message = await post(s, w.admin.token, channel, "soon gone");
    assert.equal((await call("chat.delete", { channel, ts: message.ts })).ok, true);
    const updated = await call("chat.update", { channel, ts: message.ts, text: "back?" });
    assert.deepEqual([updated.ok, updated.error], [false, "message_not_found"]);
  } finally {
    await s.close();
  }
});

Deno.test("slack shapes: missing_scope names the Slack scope a developer asks for", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const reader = await createToken(s.ctx, w.member.user, {
      scopes: ["channels:read"],
      actor: null,
    });
    const call = (method: string, args: Record<string, unknown>) =>
      slackApi(s, reader.value, { method, args });
    const post = await call("chat.postMessage", { channel: w.team.general_channel_id, text: "x" });
    assert.deepEqual(
      [post.error, post.needed, post.response_metadata.scopes],
      ["missing_scope", "chat:write", ["messages:write"]],
    );
    assert.equal(
      post.provided,
      "channels:read,groups:read,im:read,mpim:read",
      "what the token holds, in Slack's names",
    );
    const open = await call("conversations.open", { users: w.admin.user.id });
    assert.deepEqual([open.error, open.needed], ["missing_scope", "im:write"]);
  } finally {
    await s.close();
  }
});

Deno.test("slack shapes: message_changed and message_deleted carry previous_message", async () => {
  const s = await startServer({}, { engine: true });
  const hook = receiver();
  try {
    const w = await workspace(s.ctx);
    const general = w.team.general_channel_id;
    const manifest = {
      display_information: { name: "Listener" },
      oauth_config: { scopes: { bot: ["channels:history"] } },
      settings: {
        event_subscriptions: { request_url: hook.url, bot_events: ["message.channels"] },
      },
    };
    const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest), null);
    const { install } = await installApp(s.ctx, {
      app: made.app,
      teamId: w.team.id,
      scopes: ["messages:read"],
      channelId: null,
      approvedBy: null,
    });
    await addMemberAsOperator(s.ctx, general, (await getUser(s.ctx.kv, install.bot_user_id))!);
    const message = await post(s, w.admin.token, general, "first words");
    const path = `/channels/${general}/messages/${message.id}`;
    assertStatus(
      await api(s, "PATCH", path, { token: w.admin.token, body: { body: "second words" } }),
      200,
    );
    assertStatus(await api(s, "DELETE", path, { token: w.admin.token }), 204);
    // Besides these, the bot's own join notice comes: wait for what this test is about.
    const events = () => hook.hits.map((h) => JSON.parse(h.body).event);
    await waitUntil(
      () =>
        ["message_changed", "message_deleted"].every((t) => events().some((e) => e.subtype === t)),
      10_000,
      () => `the edit's and the delete's events (got ${JSON.stringify(events())})`,
    );
    const changed = events().find((e) => e.subtype === "message_changed");
    assert.equal(changed.message.text, "second words");
    assert.equal(changed.previous_message.text, "first words");
    assert.equal(changed.previous_message.ts, message.ts);
    const deleted = events().find((e) => e.subtype === "message_deleted");
    assert.equal(deleted.deleted_ts, message.ts);
    assert.equal(deleted.previous_message.ts, message.ts);
    assert.equal(deleted.previous_message.text, "", "a deleted message's text is erased, here too");
  } finally {
    await s.close();
    await hook.close();
  }
});

Deno.test("slack shapes: attachments are kept and given back; a delete takes them away", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const channel = w.team.general_channel_id;
    const attachments = [{
      fallback: "Build #43 failed",
      color: "#e01e5a",
      title: "Build #43 failed",
      text: "2 tests failed",
      fields: [{ title: "Branch", value: "main", short: true }],
      not_slacks: "dropped",
    }];
    const kept = attachments.map(({ not_slacks: _, ...rest }) => rest);
    const posted = await api(s, "POST", `/channels/${channel}/messages`, {
      token: w.admin.token,
      body: { attachments },
    });
    assertStatus(posted, 201);
    assert.deepEqual(posted.body.data.attachments, kept);
    assert.match(posted.body.data.body, /Build #43 failed\n2 tests failed\nBranch: main/);

    const viaSlack = await fetch(`${s.url}/api/slack/chat.postMessage`, {
      method: "POST",
      headers: { Authorization: `Bearer ${w.admin.token}` },
      body: new URLSearchParams({ channel, text: "", attachments: JSON.stringify(attachments) }),
    }).then((r) => r.json());
    assert.equal(viaSlack.ok, true, JSON.stringify(viaSlack));
    assert.deepEqual(viaSlack.message.attachments, kept);
    const history = await fetch(`${s.url}/api/slack/conversations.history`, {
      method: "POST",
      headers: { Authorization: `Bearer ${w.admin.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ channel, limit: 1 }),
    }).then((r) => r.json());
    assert.deepEqual(history.messages[0].attachments, kept);

    const bad = await api(s, "POST", `/channels/${channel}/messages`, {
      token: w.admin.token,
      body: { body: "x", attachments: [{ title_link: "not a url" }] },
    });
    assertStatus(bad, 422);
    assert.match(bad.body.errors.attachments[0], /^\/attachments\/0\/title_link: /);

    const path = `/channels/${channel}/messages/${posted.body.data.id}`;
    assertStatus(await api(s, "DELETE", path, { token: w.admin.token }), 204);
    const gone = await api(s, "GET", path, { token: w.admin.token });
    assert.equal(gone.body.data.attachments, undefined, "a tombstone keeps no attachments");
  } finally {
    await s.close();
  }
});

Deno.test("slack shapes: an external_id names one open view of an app in a team", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const url = "http://127.0.0.1:9/slack/events";
    const made = await createAppFromManifest(
      s.ctx,
      JSON.stringify({
        display_information: { name: "Viewer" },
        oauth_config: { scopes: { bot: ["commands"] } },
        settings: { interactivity: { is_enabled: true, request_url: url } },
      }),
      null,
    );
    const { install } = await installApp(s.ctx, {
      app: made.app,
      teamId: w.team.id,
      scopes: ["commands"],
      channelId: null,
      approvedBy: null,
    });
    const bot = subjectOfPerson((await getUser(s.ctx.kv, install.bot_user_id))!);
    const trigger = async () =>
      (await issueAnswerWays(s.ctx, {
        app: made.app,
        teamId: w.team.id,
        channelId: w.team.general_channel_id,
        userId: w.member.user.id,
        botId: install.bot_user_id,
        messageId: null,
      })).trigger_id;
    const view = {
      type: "modal",
      title: { type: "plain_text", text: "One" },
      external_id: "the-one",
      blocks: [],
    };
    await openView(s.ctx, bot, { triggerId: await trigger(), view });
    await assert.rejects(
      openView(s.ctx, bot, { triggerId: await trigger(), view }),
      (e: Error & { errors?: Record<string, string[]> }) => !!e.errors?.external_id,
    );
  } finally {
    await s.close();
  }
});

Deno.test("slack shapes: a reply reaches apps with thread_ts and parent_user_id; a direct message says im", async () => {
  const s = await startServer({}, { engine: true });
  const hook = receiver();
  try {
    const w = await workspace(s.ctx);
    const general = w.team.general_channel_id;
    const manifest = {
      display_information: { name: "Threads" },
      oauth_config: { scopes: { bot: ["channels:history", "im:history"] } },
      settings: {
        event_subscriptions: {
          request_url: hook.url,
          bot_events: ["message.channels", "message.im"],
        },
      },
    };
    const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest), null);
    const { install, token } = await installApp(s.ctx, {
      app: made.app,
      teamId: w.team.id,
      scopes: ["messages:read", "messages:write", "channels:read", "channels:write"],
      channelId: null,
      approvedBy: null,
    });
    await addMemberAsOperator(s.ctx, general, (await getUser(s.ctx.kv, install.bot_user_id))!);
    const root = await post(s, w.admin.token, general, "a question");
    assertStatus(
      await api(s, "POST", `/channels/${general}/messages`, {
        token: w.member.token,
        body: { body: "an answer", thread_root_id: root.id },
      }),
      201,
    );
    const dm = await slackApi(s, token.value, {
      method: "conversations.open",
      args: { users: w.member.user.id },
    });
    assert.equal(dm.ok, true, JSON.stringify(dm));
    assertStatus(
      await api(s, "POST", `/channels/${dm.channel.id}/messages`, {
        token: w.member.token,
        body: { body: "just us" },
      }),
      201,
    );
    const events = () => hook.hits.map((h) => JSON.parse(h.body).event);
    const find = (text: string) => events().find((e) => e.text === text);
    await waitUntil(() => find("an answer") && find("just us"), 10_000, "both events");
    const reply = find("an answer");
    assert.deepEqual(
      [reply.thread_ts, reply.parent_user_id, reply.channel_type],
      [root.ts, w.admin.user.id, "channel"],
    );
    assert.equal(find("just us").channel_type, "im");
    assert.equal(find("just us").thread_ts, undefined);
  } finally {
    await s.close();
    await hook.close();
  }
});

Deno.test("slack shapes: a modal's input without ids gets them, shown in views.open's answer, and is submitted by them", async () => {
  const s = await startServer();
  // The app closes the modal; what it was sent is in its hits.
  const app = receiver(() => new Response(""));
  try {
    const w = await workspace(s.ctx);
    const made = await createAppFromManifest(
      s.ctx,
      JSON.stringify({
        display_information: { name: "Unnamed" },
        oauth_config: { scopes: { bot: ["commands"] } },
        settings: { interactivity: { is_enabled: true, request_url: app.url } },
      }),
      null,
    );
    const { install, token } = await installApp(s.ctx, {
      app: made.app,
      teamId: w.team.id,
      scopes: ["commands"],
      channelId: null,
      approvedBy: null,
    });
    const { trigger_id } = await issueAnswerWays(s.ctx, {
      app: made.app,
      teamId: w.team.id,
      channelId: w.team.general_channel_id,
      userId: w.member.user.id,
      botId: install.bot_user_id,
      messageId: null,
    });
    const opened = await slackApi(s, token.value, {
      method: "views.open",
      args: {
        trigger_id,
        view: {
          type: "modal",
          title: { type: "plain_text", text: "Name" },
          submit: { type: "plain_text", text: "Send" },
          blocks: [{
            type: "input",
            label: { type: "plain_text", text: "Your name" },
            element: { type: "plain_text_input" },
          }],
        },
      },
    });
    assert.equal(opened.ok, true, JSON.stringify(opened));
    const [input] = opened.view.blocks;
    assert.match(input.block_id, /^\w+$/);
    assert.match(input.element.action_id, /^\w+$/);
    const submitted = await api(s, "POST", `/views/${opened.view.id}/submit`, {
      token: w.member.token,
      body: { values: { [input.block_id]: { [input.element.action_id]: { value: "Ada" } } } },
    });
    assertStatus(submitted, 200);
    const sent = JSON.parse(new URLSearchParams(app.hits[0].body).get("payload")!);
    assert.deepEqual(sent.view.state.values, {
      [input.block_id]: { [input.element.action_id]: { type: "plain_text_input", value: "Ada" } },
    });
  } finally {
    await s.close();
    await app.close();
  }
});

Deno.test("slack shapes: message metadata is kept, given back where asked for, and changed by an update", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const channel = w.team.general_channel_id;
    const call = (method: string, args: Record<string, unknown>) =>
      slackApi(s, w.admin.token, { method, args });
    const metadata = {
      event_type: "assistant_thread_context",
      event_payload: { channel_id: "C1" },
    };
    const posted = await call("chat.postMessage", { channel, text: "with context", metadata });
    assert.deepEqual(posted.message.metadata, metadata);
    const plain = await call("conversations.history", { channel, limit: 5 });
    assert.equal(plain.messages[0].metadata, undefined, "only where asked for");
    const asked = await call("conversations.history", {
      channel,
      limit: 5,
      include_all_metadata: true,
    });
    assert.deepEqual(asked.messages[0].metadata, metadata);
    // A form sends it as JSON text, as Bolt's context store does through chat.update.
    const moved = { event_type: "assistant_thread_context", event_payload: { channel_id: "C2" } };
    const form = new URLSearchParams({
      channel,
      ts: posted.ts,
      text: "with context",
      metadata: JSON.stringify(moved),
    });
    const updated = await fetch(`${s.url}/api/slack/chat.update`, {
      method: "POST",
      headers: { Authorization: `Bearer ${w.admin.token}` },
      body: form,
    }).then((r) => r.json());
    assert.deepEqual(updated.message.metadata, moved);
    const rest = await api(
      s,
      "GET",
      `/channels/${channel}/messages/${
        (await api(s, "GET", `/channels/${channel}/messages?limit=1`, { token: w.admin.token }))
          .body.data[0].id
      }`,
      { token: w.admin.token },
    );
    assert.deepEqual(rest.body.data.metadata, moved);
    const bad = await call("chat.postMessage", {
      channel,
      text: "x",
      metadata: { event_payload: {} },
    });
    assert.equal(bad.ok, false);
  } finally {
    await s.close();
  }
});
