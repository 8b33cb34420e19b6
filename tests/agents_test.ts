/**
 * Slack's agents (decisions.md, "Slack's agents: assistant threads and streamed replies"), at the
 * wire: a person starts a thread with an agent and tells it what they look at; the agent hears
 * `assistant_thread_started` and `assistant_thread_context_changed`, and shows a status,
 * suggested prompts and a title, which the person sees on their live stream and in the thread.
 */
import assert from "node:assert/strict";
import { api, assertStatus, slackApi, startServer, type TestServer, workspace } from "./harness.ts";
import { type Receiver, receiver, waitUntil } from "./webhook_receivers.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { connect } from "./sse_client.ts";

/** An agent in `assistant_view` (and `agent_view`), installed, its events sent to `app`. */
async function agentOf(s: TestServer, app: Receiver) {
  const w = await workspace(s.ctx);
  const made = await createAppFromManifest(
    s.ctx,
    JSON.stringify({
      display_information: { name: "Helper" },
      features: {
        assistant_view: {
          assistant_description: "Helps",
          suggested_prompts: [{ title: "Start", message: "What can you do?" }],
        },
        agent_view: {},
      },
      oauth_config: {
        scopes: { bot: ["assistant:write", "chat:write", "im:history", "channels:join"] },
      },
      settings: {
        interactivity: { is_enabled: true, request_url: app.url },
        event_subscriptions: {
          request_url: app.url,
          bot_events: [
            "assistant_thread_started",
            "assistant_thread_context_changed",
            "app_context_changed",
            "app_home_opened",
            "message.im",
          ],
        },
      },
    }),
    null,
  );
  const { install, token } = await installApp(s.ctx, {
    app: made.app,
    teamId: w.team.id,
    scopes: made.app.scopes,
    channelId: null,
    approvedBy: null,
  });
  return { w, app: made.app, install, bot: token.value };
}

/** The Slack events the app's request URL was sent, in order. */
const eventsOf = (app: Receiver) =>
  app.hits.flatMap((h) => {
    const body = JSON.parse(h.body);
    return body.type === "event_callback" ? [body.event] : [];
  });

Deno.test("agents: a thread started, its context changed, its status, prompts and title shown", async () => {
  const s = await startServer({}, { engine: true });
  const app = receiver();
  try {
    const { w, app: agent, bot } = await agentOf(s, app);
    const general = w.team.general_channel_id;
    const stream = await connect(`${s.url}/api/v1/events/stream`, w.member.token);

    const started = await api(s, "POST", `/apps/${agent.id}/threads`, {
      token: w.member.token,
      body: { context: { channel_id: general } },
    });
    assertStatus(started, 201);
    const thread = started.body.data;
    assert.equal(thread.context_channel_id, general);
    assert.deepEqual(thread.suggested_prompts.prompts, [
      { title: "Start", message: "What can you do?" },
    ]);
    await waitUntil(
      () => eventsOf(app).some((e) => e.type === "assistant_thread_started"),
      10_000,
      "assistant_thread_started",
    );
    const opened = eventsOf(app).find((e) => e.type === "assistant_thread_started");
    assert.deepEqual(opened.assistant_thread, {
      user_id: w.member.user.id,
      context: { channel_id: general, team_id: w.team.id, enterprise_id: null },
      channel_id: thread.channel_id,
      thread_ts: thread.thread_ts,
    });

    const moved = await api(s, "PUT", `/apps/${agent.id}/threads/${thread.thread_ts}/context`, {
      token: w.member.token,
      body: { channel_id: null },
    });
    assertStatus(moved, 200);
    await waitUntil(
      () => eventsOf(app).some((e) => e.type === "assistant_thread_context_changed"),
      10_000,
      "assistant_thread_context_changed",
    );

    const at = { channel_id: thread.channel_id, thread_ts: thread.thread_ts };
    const call = (method: string, args: Record<string, unknown>) =>
      slackApi(s, bot, { method, args: { ...at, ...args } });
    assert.deepEqual(
      await call("assistant.threads.setStatus", {
        status: "is thinking...",
        loading_messages: ["Reading", "Writing"],
      }),
      { ok: true },
    );
    assert.deepEqual(
      await call("assistant.threads.setSuggestedPrompts", {
        title: "Try",
        prompts: [{ title: "One", message: "first" }, { title: "Two", message: "second" }],
      }),
      { ok: true },
    );
    assert.deepEqual(await call("assistant.threads.setTitle", { title: "About channels" }), {
      ok: true,
    });
    const five = Array.from({ length: 5 }, (_, i) => ({ title: `${i}`, message: `${i}` }));
    const tooMany = await call("assistant.threads.setSuggestedPrompts", { prompts: five });
    assert.equal(tooMany.ok, false);

    await waitUntil(
      () =>
        ["assistant.status", "assistant.suggested_prompts"].every((t) =>
          stream.events.some((e) => e.event === t)
        ),
      10_000,
      "the status and prompts on the person's stream",
    );
    const shown = await api(s, "GET", `/apps/${agent.id}/threads/${thread.thread_ts}`, {
      token: w.member.token,
    });
    assertStatus(shown, 200);
    assert.equal(shown.body.data.status, "is thinking...");
    assert.deepEqual(shown.body.data.loading_messages, ["Reading", "Writing"]);
    assert.deepEqual(shown.body.data.suggested_prompts.title, "Try");
    const root = await api(s, "GET", `/channels/${thread.channel_id}/messages?limit=5`, {
      token: w.member.token,
    });
    const rootMessage = root.body.data.find((m: { ts: string }) => m.ts === thread.thread_ts);
    assert.equal(rootMessage.type, "assistant_thread");
    assert.equal(rootMessage.body, "About channels");

    // The agent's reply in the thread ends its status.
    const reply = await slackApi(s, bot, {
      method: "chat.postMessage",
      args: { channel: thread.channel_id, thread_ts: thread.thread_ts, text: "Here you go" },
    });
    assert.equal(reply.ok, true);
    const after = await api(s, "GET", `/apps/${agent.id}/threads/${thread.thread_ts}`, {
      token: w.member.token,
    });
    assert.equal(after.body.data.status, "");
    await stream.close();
  } finally {
    await s.close();
    await app.close();
  }
});

Deno.test("agents: the Messages tab opens, and the context beside the agent changes", async () => {
  const s = await startServer({}, { engine: true });
  const app = receiver();
  try {
    const { w, app: agent } = await agentOf(s, app);
    const opened = await api(s, "GET", `/apps/${agent.id}/home?tab=messages`, {
      token: w.member.token,
    });
    assertStatus(opened, 200);
    assert.equal(opened.body.data.thread_ts, null);
    await waitUntil(
      () => eventsOf(app).some((e) => e.type === "app_home_opened" && e.tab === "messages"),
      10_000,
      "app_home_opened with tab messages",
    );
    const changed = await api(s, "PUT", `/apps/${agent.id}/context`, {
      token: w.member.token,
      body: { channel_id: w.team.general_channel_id },
    });
    assertStatus(changed, 200);
    await waitUntil(
      () => eventsOf(app).some((e) => e.type === "app_context_changed"),
      10_000,
      "app_context_changed",
    );
    const event = eventsOf(app).find((e) => e.type === "app_context_changed");
    assert.equal(event.user, w.member.user.id);
    assert.deepEqual(event.context.entities[0].value, w.team.general_channel_id);
    const unknown = await api(s, "GET", `/apps/${crypto.randomUUID()}/home?tab=messages`, {
      token: w.member.token,
    });
    assertStatus(unknown, 404);
  } finally {
    await s.close();
    await app.close();
  }
});

/** What an agent's answer carries: its text, a table, a plan of tasks, and feedback buttons. */
const ANSWER_BLOCKS = [
  { type: "markdown", text: "**Three** channels are busy." },
  {
    type: "table",
    rows: [
      [{ type: "raw_text", text: "Channel" }, { type: "raw_text", text: "Posts" }],
      [{ type: "raw_text", text: "general" }, { type: "raw_number", value: 12, text: "12" }],
    ],
  },
  {
    type: "plan",
    title: "What I did",
    tasks: [
      { type: "task_card", task_id: "t1", title: "Read the channels", status: "complete" },
      { type: "task_card", task_id: "t2", title: "Count the posts", status: "in_progress" },
    ],
  },
  {
    type: "context_actions",
    elements: [{
      type: "feedback_buttons",
      action_id: "feedback",
      positive_button: { text: { type: "plain_text", text: "Good" }, value: "good" },
      negative_button: { text: { type: "plain_text", text: "Bad" }, value: "bad" },
    }],
  },
];

Deno.test("agents: an answer's markdown, table, plan and feedback buttons, read as text and pressed", async () => {
  const s = await startServer({}, { engine: true });
  const app = receiver(() => new Response(""));
  try {
    const { w, bot } = await agentOf(s, app);
    const general = w.team.general_channel_id;
    const joined = await slackApi(s, bot, {
      method: "conversations.join",
      args: { channel: general },
    });
    assert.equal(joined.ok, true, JSON.stringify(joined));
    const posted = await slackApi(s, bot, {
      method: "chat.postMessage",
      args: { channel: general, blocks: ANSWER_BLOCKS },
    });
    assert.equal(posted.ok, true, JSON.stringify(posted));
    const listed = await api(s, "GET", `/channels/${general}/messages?limit=1`, {
      token: w.member.token,
    });
    const message = listed.body.data[0];
    assert.equal(
      message.text,
      "**Three** channels are busy.\nChannel | Posts\ngeneral | 12\nWhat I did\n✓ Read the channels\n… Count the posts",
    );
    const pressed = await api(s, "POST", `/channels/${general}/messages/${message.id}/actions`, {
      token: w.member.token,
      body: { action_id: "feedback", value: "good" },
    });
    assertStatus(pressed, 200);
    const action =
      JSON.parse(new URLSearchParams(app.hits.at(-1)!.body).get("payload")!).actions[0];
    assert.deepEqual([action.type, action.action_id, action.value], [
      "feedback_buttons",
      "feedback",
      "good",
    ]);
    const wrong = await api(s, "POST", `/channels/${general}/messages/${message.id}/actions`, {
      token: w.member.token,
      body: { action_id: "feedback", value: "neither" },
    });
    assertStatus(wrong, 422);
    const bad = await slackApi(s, bot, {
      method: "chat.postMessage",
      args: {
        channel: general,
        blocks: [{ type: "plan", title: "x", tasks: [{ type: "task_card" }] }],
      },
    });
    assert.equal(bad.error, "invalid_blocks");
    assert.match(bad.response_metadata.messages.join(" "), /\/blocks\/0\/tasks\/0\/task_id/);
  } finally {
    await s.close();
    await app.close();
  }
});

Deno.test("agents: markdown_text is a message of one markdown block, never beside text or blocks", async () => {
  const s = await startServer();
  const app = receiver();
  try {
    const { w, bot } = await agentOf(s, app);
    const general = w.team.general_channel_id;
    await slackApi(s, bot, { method: "conversations.join", args: { channel: general } });
    const posted = await slackApi(s, bot, {
      method: "chat.postMessage",
      args: { channel: general, markdown_text: "# Done\n*All* good" },
    });
    assert.equal(posted.ok, true, JSON.stringify(posted));
    assert.deepEqual(posted.message.blocks, [{ type: "markdown", text: "# Done\n*All* good" }]);
    assert.equal(posted.message.text, "# Done\n*All* good");
    const both = await slackApi(s, bot, {
      method: "chat.postMessage",
      args: { channel: general, markdown_text: "x", text: "y" },
    });
    assert.equal(both.error, "invalid_arguments");
  } finally {
    await s.close();
    await app.close();
  }
});
