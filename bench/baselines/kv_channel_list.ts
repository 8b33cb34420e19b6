/**
 * Baseline of GET /channels: a user's channels read the bare way, from the service's own store
 * file: one `kv.list` of the user's index, one `getMany` per ten channels (all in flight at
 * once), answered as JSON. `/channels/<userId>`.
 */
import { baselineArgs, json, serveBare } from "./shared.ts";

const { port, kvPath } = baselineArgs();
const kv = await Deno.openKv(kvPath);

serveBare(port, async (req) => {
  const userId = new URL(req.url).pathname.split("/")[2];
  const keys: Deno.KvKey[] = [];
  for await (const e of kv.list({ prefix: ["user_channels", userId] }, { batchSize: 500 })) {
    keys.push(["channels", e.key[2] as string]);
  }
  const reads = [];
  for (let i = 0; i < keys.length; i += 10) reads.push(kv.getMany(keys.slice(i, i + 10)));
  const data = (await Promise.all(reads)).flat().map((e) => e.value);
  return json({ data });
});
