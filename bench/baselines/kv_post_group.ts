/**
 * Baseline of POST /channels/{id}/messages with a post's own writes under group commit: the
 * eleven keys the service writes for a post no subscription hears (message, timeline copy, `ts`
 * index, event and its four indexes, three counters, with the same sizes and time-to-live), the
 * waiting requests' posts (at most 64) in one commit that checks the channel and each timeline
 * slot, one commit in flight at a time. What the service's layout allows at best, with none of its
 * reads, framework or validation around it: set against kv_group_commit, it tells what a post's
 * keys cost; against the service, what the rest of a request costs.
 */
import {
  baselineArgs,
  groupCommitter,
  json,
  messageLike,
  serveBare,
  timeOrderedId,
} from "./shared.ts";

const DAYS_30 = 30 * 24 * 3_600_000;
const { port, kvPath } = baselineArgs();
const kv = await Deno.openKv(kvPath);
const channelId = timeOrderedId();
const teamId = timeOrderedId();
await kv.set(["channels", channelId], { id: channelId, name: "bench" });
const channel = await kv.get(["channels", channelId]);
let pos = 0;

type Message = ReturnType<typeof messageLike>;

function writePost(op: Deno.AtomicOperation, message: Message) {
  const slot = message.timeline_pos;
  const eventId = timeOrderedId();
  const createdAt = new Date().toISOString();
  const index = { channel_id: channelId, type: "message.created", created_at: createdAt };
  op.check({ key: ["timeline", channelId, slot], versionstamp: null })
    .set(["messages", message.id], message)
    .set(["timeline", channelId, slot], message)
    .set(["message_ts", channelId, `1795910080.${slot}`], message.id)
    .set(["events", eventId], {
      id: eventId,
      type: "message.created",
      team_id: teamId,
      channel_id: channelId,
      created_at: createdAt,
      data: message,
    }, { expireIn: DAYS_30 })
    .set(["team_events", teamId, eventId], index, { expireIn: DAYS_30 })
    .set(["open_events", teamId, eventId], index, { expireIn: DAYS_30 })
    .set(["channel_events", channelId, eventId], eventId, { expireIn: DAYS_30 })
    .set(["message_events", message.id, eventId], 1, { expireIn: DAYS_30 });
}

const commit = groupCommitter<Message>(kv, (op, messages) => {
  op.check(channel);
  for (const message of messages) writePost(op, message);
  const last = BigInt(messages.at(-1)!.timeline_pos);
  op.set(["timeline_len", channelId], new Deno.KvU64(last))
    .set(["channel_ts", channelId], new Deno.KvU64(last))
    .sum(["team_events_version", teamId], BigInt(messages.length));
});

serveBare(port, async (req) => {
  const input = await req.json() as { body: string };
  const message = messageLike(channelId, ++pos, input.body);
  await commit(message);
  return json({ data: message }, 201);
});
