/**
 * A second baseline of POST /channels/{id}/messages: the same single commit as the service's
 * (message, timeline copy, client_uuid key, length `max`, outbox event, one job per
 * subscription, queue message, with the same checks) but none of the reads, framework or
 * validation around it. Nothing listens to its queue: it is the commit with delivery paused.
 */
import { baselineArgs, json, messageLike, serveBare, timeOrderedId } from "./shared.ts";

const SUBSCRIPTIONS = ["s1", "s2", "s3"].map(() => timeOrderedId());
const { port, kvPath } = baselineArgs();
const kv = await Deno.openKv(kvPath);
const channelId = timeOrderedId();
const authorId = timeOrderedId();
await kv.set(["channels", channelId], { id: channelId, name: "bench" });
await kv.set(["members", channelId, authorId], { id: authorId });
const [channel, member] = await kv.getMany([["channels", channelId], [
  "members",
  channelId,
  authorId,
]]);
let pos = 0;

serveBare(port, async (req) => {
  const input = await req.json() as { body: string };
  const message = {
    ...messageLike(channelId, ++pos, input.body),
    client_uuid: crypto.randomUUID(),
  };
  const eventId = timeOrderedId();
  const now = new Date().toISOString();
  const uuidKey = ["client_uuids", authorId, message.client_uuid];
  const op = kv.atomic().check(channel, member)
    .check({ key: ["messages", message.id], versionstamp: null })
    .check({ key: ["timeline", channelId, pos], versionstamp: null })
    .check({ key: uuidKey, versionstamp: null })
    .set(uuidKey, message.id)
    .set(["messages", message.id], message)
    .set(["timeline", channelId, pos], message)
    .max(["timeline_len", channelId], BigInt(pos))
    .set(["events", eventId], {
      id: eventId,
      type: "message.created",
      created_at: now,
      data: message,
      subscription_ids: SUBSCRIPTIONS,
    }, { expireIn: 30 * 24 * 3_600_000 });
  for (const sub of SUBSCRIPTIONS) {
    op.set(["jobs", sub, eventId], { subscription_id: sub, event_id: eventId, attempt: 1 });
  }
  op.enqueue({ kind: "event", event_id: eventId }, {
    keysIfUndelivered: [["undelivered", eventId]],
  });
  if (!(await op.commit()).ok) return json({ message: "A check failed." }, 409);
  return json({ data: message }, 201);
});
