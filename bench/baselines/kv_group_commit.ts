/**
 * Baseline of POST /channels/{id}/messages with group commit: parse the body, then one atomic
 * commit for the sets of every request waiting (at most 64), one commit in flight at a time;
 * each answers 201 once its commit is in. What the store's one writer allows at best.
 */
import { baselineArgs, groupCommitter, json, messageLike, serveBare } from "./shared.ts";

const { port, kvPath } = baselineArgs();
const kv = await Deno.openKv(kvPath);
const channelId = crypto.randomUUID();
let pos = 0;

const commit = groupCommitter<ReturnType<typeof messageLike>>(kv, (op, messages) => {
  for (const message of messages) op.set(["messages", message.id], message);
});

serveBare(port, async (req) => {
  const input = await req.json() as { body: string };
  const message = messageLike(channelId, ++pos, input.body);
  await commit(message);
  return json({ data: message }, 201);
});
