/**
 * Streamed replies (decisions.md, "Slack's agents": "Streamed replies") at the wire: a reply is a
 * real message while it streams (REST: its text so far, `streaming: true`), each addition reaches
 * its person's live stream with no event row, and everyone else hears `message.created` once,
 * when it stops, by the agent or after ten minutes by the service.
 */
import assert from "node:assert/strict";
import { api, slackApi, startServer, type TestServer, workspace } from "./harness.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { connect, type StreamClient } from "./sse_client.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { stopStaleStreams, STREAM_MS } from "../domain/messages/streams.ts";

/** An agent installed in a new team: its bot's token, and the team. */
async function agentIn(s: TestServer) {
  const w = await workspace(s.ctx);
  const made = await createAppFromManifest(
    s.ctx,
    JSON.stringify({
      display_information: { name: "Streamer" },
      features: { assistant_view: { assistant_description: "Streams" } },
      oauth_config: { scopes: { bot: ["assistant:write", "chat:write", "channels:join"] } },
    }),
    null,
  );
  const { token } = await installApp(s.ctx, {
    app: made.app,
    teamId: w.team.id,
    scopes: made.app.scopes,
    channelId: null,
    approvedBy: null,
  });
  return { w, bot: token.value };
}

/**
 * What an onlooker's live stream carried of the message `ts`, once a later message of `token`'s
 * in `channel` came after it: events come in commit order, so nothing of `ts` is still on its way.
 */
async function heardOf(
  s: TestServer,
  { onlooker, token, channel, ts }: {
    onlooker: StreamClient;
    token: string;
    channel: string;
    ts: string;
  },
) {
  const mark = await api(s, "POST", `/channels/${channel}/messages`, {
    token,
    body: { body: "mark" },
  });
  await waitUntil(
    () => onlooker.events.some((e) => e.data?.data?.id === mark.body.data.id),
    10_000,
    "the mark on the onlooker's stream",
  );
  return onlooker.events.filter((e) => e.data?.data?.ts === ts).map((e) => e);
}

Deno.test("agent streams: a reply streams to its person, and is heard of once, at its stop", async () => {
  const s = await startServer();
  try {
    const { w, bot } = await agentIn(s);
    const general = w.team.general_channel_id;
    await slackApi(s, bot, { method: "conversations.join", args: { channel: general } });
    const question = await api(s, "POST", `/channels/${general}/messages`, {
      token: w.member.token,
      body: { body: "What is busy?" },
    });
    const threadTs = question.body.data.ts;
    const person = await connect(`${s.url}/api/v1/events/stream`, w.member.token);
    const onlooker = await connect(`${s.url}/api/v1/events/stream`, w.admin.token);
    const heard = () =>
      heardOf(s, { onlooker, token: w.admin.token, channel: general, ts: started.ts });
    const call = (method: string, args: Record<string, unknown>) =>
      slackApi(s, bot, { method, args: { channel: general, ...args } });

    assert.equal(
      (await call("chat.startStream", { thread_ts: threadTs })).error,
      "missing_recipient_user_id",
    );
    assert.equal(
      (await call("chat.startStream", { thread_ts: threadTs, recipient_user_id: w.member.user.id }))
        .error,
      "missing_recipient_team_id",
    );
    const started = await call("chat.startStream", {
      thread_ts: threadTs,
      recipient_user_id: w.member.user.id.toUpperCase(),
      recipient_team_id: w.team.id,
      task_display_mode: "plan",
      markdown_text: "Looking",
    });
    assert.equal(started.ok, true, JSON.stringify(started));
    const ts = started.ts;
    const appended = await call("chat.appendStream", {
      ts,
      chunks: [
        { type: "markdown_text", text: " at the channels." },
        { type: "plan_update", title: "Counting" },
        { type: "task_update", id: "t1", title: "Read", status: "in_progress" },
      ],
    });
    assert.equal(appended.ok, true, JSON.stringify(appended));
    await call("chat.appendStream", {
      ts,
      chunks: [{ type: "task_update", id: "t1", title: "Read", status: "complete" }],
    });

    const thread = await api(
      s,
      "GET",
      `/channels/${general}/messages?thread_root_id=${question.body.data.id}`,
      { token: w.admin.token },
    );
    const reply = thread.body.data.find((m: { ts: string }) => m.ts === ts);
    assert.equal(reply.streaming, true);
    assert.equal(reply.edited_at, null);
    assert.deepEqual(reply.blocks[1], {
      type: "plan",
      title: "Counting",
      tasks: [{ type: "task_card", task_id: "t1", title: "Read", status: "complete" }],
    });
    assert.match(reply.text, /^Looking at the channels\.\nCounting\n✓ Read$/);
    assert.deepEqual(await heard(), []);
    await waitUntil(
      () => person.events.filter((e) => e.event === "message.streaming").length === 3,
      10_000,
      "each addition on the person's stream",
    );
    const last = person.events.filter((e) => e.event === "message.streaming").at(-1)!;
    assert.equal(last.id || null, null);
    assert.equal(last.data.message.streaming, true);
    assert.equal(last.data.appended.chunks[0].status, "complete");

    const stopped = await call("chat.stopStream", {
      ts,
      markdown_text: " Done.",
      blocks: [{
        type: "context_actions",
        elements: [{
          type: "feedback_buttons",
          action_id: "feedback",
          positive_button: { text: { type: "plain_text", text: "Good" }, value: "good" },
          negative_button: { text: { type: "plain_text", text: "Bad" }, value: "bad" },
        }],
      }],
      metadata: { event_type: "answer", event_payload: { model: "stub" } },
    });
    assert.equal(stopped.ok, true, JSON.stringify(stopped));
    const once = await heard();
    assert.deepEqual(once.map((e) => e.event), ["message.created"]);
    const whole = once[0].data.data;
    assert.equal(whole.streaming, undefined);
    assert.match(whole.text, /^Looking at the channels\. Done\./);
    assert.deepEqual(whole.metadata, {
      event_type: "answer",
      event_payload: { model: "stub" },
    });
    assert.equal(whole.blocks.at(-1).type, "context_actions");

    assert.equal(
      (await call("chat.appendStream", { ts, markdown_text: "x" })).error,
      "message_not_in_streaming_state",
    );
    assert.equal((await call("chat.stopStream", { ts })).error, "message_not_in_streaming_state");
    assert.equal(
      (await call("chat.appendStream", { ts: threadTs, markdown_text: "x" })).error,
      "cant_update_message",
    );
    await person.close();
    await onlooker.close();
  } finally {
    await s.close();
  }
});

Deno.test("agent streams: one never stopped is stopped by the service, once, as it stood", async () => {
  const s = await startServer();
  try {
    const { w, bot } = await agentIn(s);
    const general = w.team.general_channel_id;
    await slackApi(s, bot, { method: "conversations.join", args: { channel: general } });
    const onlooker = await connect(`${s.url}/api/v1/events/stream`, w.admin.token);
    const root = await slackApi(s, bot, {
      method: "chat.postMessage",
      args: { channel: general, text: "Ask me" },
    });
    const started = await slackApi(s, bot, {
      method: "chat.startStream",
      args: {
        channel: general,
        thread_ts: root.ts,
        recipient_user_id: w.member.user.id,
        recipient_team_id: w.team.id,
        chunks: [{ type: "markdown_text", text: "Half an answer" }],
      },
    });
    assert.equal(started.ok, true, JSON.stringify(started));
    assert.equal(await stopStaleStreams(s.ctx), 0);
    assert.equal(await stopStaleStreams(s.ctx, Date.now() + STREAM_MS + 1_000), 1);
    assert.equal(await stopStaleStreams(s.ctx, Date.now() + STREAM_MS + 1_000), 0);
    const heard = await heardOf(s, {
      onlooker,
      token: w.admin.token,
      channel: general,
      ts: started.ts,
    });
    assert.deepEqual(heard.map((e) => [e.event, e.data.data.text]), [
      ["message.created", "Half an answer"],
    ]);
    const late = await slackApi(s, bot, {
      method: "chat.appendStream",
      args: { channel: general, ts: started.ts, markdown_text: "more" },
    });
    assert.equal(late.error, "message_not_in_streaming_state");
    await onlooker.close();
  } finally {
    await s.close();
  }
});
