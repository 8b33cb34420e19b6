/**
 * Message metadata events (decisions.md, "Slack's agents": "Message metadata"): an app whose
 * manifest lists `metadata_subscriptions` hears `message_metadata_posted`, `_updated` and
 * `_deleted` for messages carrying metadata of those kinds, from the app named or any (`*`), in
 * the channels its bot is in; nothing for other kinds.
 */
import assert from "node:assert/strict";
import { slackApi, startServer, type TestServer, workspace } from "./harness.ts";
import { type Receiver, receiver, waitUntil } from "./webhook_receivers.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import type { Team } from "../core/types.ts";

/** An app installed in `team`, its events sent to `url`, with what else its manifest says. */
async function appIn(
  s: TestServer,
  { team, name, url, settings }: {
    team: Team;
    name: string;
    url: string;
    settings: Record<string, unknown>;
  },
) {
  const made = await createAppFromManifest(
    s.ctx,
    JSON.stringify({
      display_information: { name },
      oauth_config: { scopes: { bot: ["chat:write", "channels:join", "metadata.message:read"] } },
      settings: { event_subscriptions: { request_url: url, ...settings } },
    }),
    null,
  );
  const { token } = await installApp(s.ctx, {
    app: made.app,
    teamId: team.id,
    scopes: made.app.scopes,
    channelId: null,
    approvedBy: null,
  });
  await slackApi(s, token.value, {
    method: "conversations.join",
    args: { channel: team.general_channel_id },
  });
  return { app: made.app, bot: token.value };
}

/** The Slack events the receiver was sent whose type starts with `message_metadata`. */
const metadataEvents = (r: Receiver) =>
  r.hits.flatMap((h) => {
    const event = JSON.parse(h.body).event;
    return event?.type?.startsWith("message_metadata") ? [event] : [];
  });

Deno.test("metadata events: posted, updated and deleted, of the kinds an app listed", async () => {
  const s = await startServer({}, { engine: true });
  const listening = receiver();
  const posting = receiver();
  try {
    const w = await workspace(s.ctx);
    const general = w.team.general_channel_id;
    const poster = await appIn(s, {
      team: w.team,
      name: "Poster",
      url: posting.url,
      settings: { bot_events: ["app_home_opened"] },
    });
    await appIn(s, {
      team: w.team,
      name: "Listener",
      url: listening.url,
      settings: {
        metadata_subscriptions: [
          { app_id: poster.app.id, event_type: "task_created" },
          { app_id: "*", event_type: "answer" },
        ],
      },
    });
    const post = (metadata: unknown) =>
      slackApi(s, poster.bot, {
        method: "chat.postMessage",
        args: { channel: general, text: "Task", metadata },
      });
    await post({ event_type: "ignored", event_payload: { id: 0 } });
    const task = await post({ event_type: "task_created", event_payload: { id: 1 } });
    assert.equal(task.ok, true, JSON.stringify(task));
    await slackApi(s, poster.bot, {
      method: "chat.update",
      args: {
        channel: general,
        ts: task.ts,
        text: "Task, done",
        metadata: { event_type: "task_created", event_payload: { id: 1, done: true } },
      },
    });
    await slackApi(s, poster.bot, {
      method: "chat.delete",
      args: { channel: general, ts: task.ts },
    });
    await waitUntil(() => metadataEvents(listening).length >= 3, 10_000, "three metadata events");
    const [posted, updated, deleted] = metadataEvents(listening);
    assert.deepEqual(
      [posted.type, updated.type, deleted.type],
      ["message_metadata_posted", "message_metadata_updated", "message_metadata_deleted"],
    );
    assert.equal(posted.app_id, poster.app.id);
    assert.equal(posted.channel_id, general);
    assert.equal(posted.message_ts, task.ts);
    assert.deepEqual(posted.metadata, { event_type: "task_created", event_payload: { id: 1 } });
    assert.deepEqual(updated.previous_metadata.event_payload, { id: 1 });
    assert.deepEqual(updated.metadata.event_payload, { id: 1, done: true });
    assert.equal(deleted.deleted_ts, task.ts);
    assert.deepEqual(deleted.previous_metadata.event_payload, { id: 1, done: true });
    assert.equal(metadataEvents(listening).length, 3);
    assert.deepEqual(metadataEvents(posting), []);
  } finally {
    await s.close();
    await listening.close();
    await posting.close();
  }
});
