/** Baseline of GET /channels/{id}: one KV get, a small JSON answer. */
import { baselineArgs, json, serveBare } from "./shared.ts";

const { port, kvPath } = baselineArgs();
const kv = await Deno.openKv(kvPath);
const channelId = crypto.randomUUID();
await kv.set(["channels", channelId], {
  id: channelId,
  name: "bench",
  slug: "bench",
  visibility: "public",
  topic: null,
  is_general: false,
  is_archived: false,
  is_direct: false,
  created_at: new Date().toISOString(),
});

serveBare(port, async () => {
  const entry = await kv.get(["channels", channelId]);
  return entry.value ? json({ data: entry.value }) : json({ message: "Not found." }, 404);
});
