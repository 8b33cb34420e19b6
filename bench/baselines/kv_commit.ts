/** Baseline of POST /channels/{id}/messages: parse the body, ONE atomic commit, answer 201. */
import { baselineArgs, json, messageLike, serveBare } from "./shared.ts";

const { port, kvPath } = baselineArgs();
const kv = await Deno.openKv(kvPath);
const channelId = crypto.randomUUID();
let pos = 0;

serveBare(port, async (req) => {
  const input = await req.json() as { body: string };
  const message = messageLike(channelId, ++pos, input.body);
  await kv.atomic().set(["messages", message.id], message).commit();
  return json({ data: message }, 201);
});
