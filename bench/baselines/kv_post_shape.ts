/**
 * A second baseline of POST /channels/{id}/messages: one post's writes in a commit of its own
 * (message, timeline copy, length, outbox event, one job per subscription, checks: channel
 * unchanged, timeline slot free), with none of the reads, framework or validation around it.
 * The service commits a channel's concurrent posts together, so it can beat this. The
 * service's own engine wakes on its commit, so like it this enqueues nothing; and nothing
 * delivers: it is the commit with delivery paused.
 */
import { baselineArgs, json, messageLike, serveBare, timeOrderedId } from "./shared.ts";

const SUBSCRIPTIONS = ["s1", "s2", "s3"].map(() => timeOrderedId());
const { port, kvPath } = baselineArgs();
const kv = await Deno.openKv(kvPath);
const channelId = timeOrderedId();
await kv.set(["channels", channelId], { id: channelId, name: "bench" });
const channel = await kv.get(["channels", channelId]);
let pos = 0;

serveBare(port, async (req) => {
  const input = await req.json() as { body: string };
  const message = messageLike(channelId, ++pos, input.body);
  const eventId = timeOrderedId();
  const now = new Date().toISOString();
  const op = kv.atomic().check(channel)
    .check({ key: ["timeline", channelId, pos], versionstamp: null })
    .set(["messages", message.id], message)
    .set(["timeline", channelId, pos], message)
    .max(["timeline_len", channelId], BigInt(pos))
    .set(["events", eventId], {
      id: eventId,
      type: "message.created",
      created_at: now,
      data: message,
    }, { expireIn: 30 * 24 * 3_600_000 });
  for (const sub of SUBSCRIPTIONS) {
    op.set(["jobs", sub, eventId], { subscription_id: sub, event_id: eventId, attempt: 1 });
  }
  if (!(await op.commit()).ok) return json({ message: "A check failed." }, 409);
  return json({ data: message }, 201);
});
