/**
 * Baseline of POST /channels/{id}/messages with group commit: parse the body, then one atomic
 * commit for the sets of every request waiting (at most 64), one commit in flight at a time;
 * each answers 201 once its commit is in. What the store's one writer allows at best.
 */
import { baselineArgs, json, messageLike, serveBare } from "./shared.ts";

const GROUP = 64;
const { port, kvPath } = baselineArgs();
const kv = await Deno.openKv(kvPath);
const channelId = crypto.randomUUID();
let pos = 0;

interface Waiting {
  message: ReturnType<typeof messageLike>;
  done: () => void;
}
const waiting: Waiting[] = [];
let committing = false;

async function commitWaiting() {
  committing = true;
  while (waiting.length > 0) {
    const group = waiting.splice(0, GROUP);
    const op = kv.atomic();
    for (const { message } of group) op.set(["messages", message.id], message);
    await op.commit();
    for (const { done } of group) done();
  }
  committing = false;
}

serveBare(port, async (req) => {
  const input = await req.json() as { body: string };
  const message = messageLike(channelId, ++pos, input.body);
  await new Promise<void>((done) => {
    waiting.push({ message, done });
    if (!committing) commitWaiting();
  });
  return json({ data: message }, 201);
});
