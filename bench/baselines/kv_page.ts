/**
 * Baseline of GET /channels/{id}/messages page 1: one KV get (the timeline length) and one
 * `kv.list` of the newest 50 of 10,000 message-like values, answered as JSON.
 */
import { baselineArgs, json, messageLike, sampleBody, serveBare } from "./shared.ts";

const COUNT = 10_000;
const PER_PAGE = 50;
const { port, kvPath } = baselineArgs();
const kv = await Deno.openKv(kvPath);
const channelId = "0190a000-0000-7000-8000-000000000000";

// Seeded once per KV file: a second round reuses what the first wrote.
if ((await kv.get(["timeline_len", channelId])).versionstamp === null) {
  for (let start = 1; start <= COUNT; start += 500) {
    const op = kv.atomic();
    for (let pos = start; pos < start + 500; pos++) {
      op.set(["timeline", channelId, pos], messageLike(channelId, pos, sampleBody(pos)));
    }
    await op.commit();
  }
  await kv.set(["timeline_len", channelId], new Deno.KvU64(BigInt(COUNT)));
}

serveBare(port, async () => {
  const len = Number((await kv.get<Deno.KvU64>(["timeline_len", channelId])).value?.value ?? 0n);
  const data = [];
  const page = kv.list({
    start: ["timeline", channelId, len - PER_PAGE + 1],
    end: ["timeline", channelId, len + 1],
  }, { reverse: true });
  for await (const e of page) data.push(e.value);
  return json({ data });
});
