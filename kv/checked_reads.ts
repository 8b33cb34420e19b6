import { RecentMap } from "../core/recent_map.ts";
import { keyId } from "./keys.ts";

/**
 * Entries as this process last read them for a write that checks each one in its commit. Such a
 * write may start from these instead of reading: if any of them changed since, here or in
 * another process, its commit fails and it reads afresh. So a stale entry costs one lost commit
 * and never decides anything. Nothing else may answer from here: a read that commits nothing
 * has no check to catch a stale entry.
 */
const remembered = new WeakMap<Deno.Kv, RecentMap<string, Deno.KvEntryMaybe<unknown>>>();

function memoryOf(kv: Deno.Kv) {
  let memory = remembered.get(kv);
  if (!memory) remembered.set(kv, memory = new RecentMap(20_000));
  return memory;
}

/**
 * Reads `keys` for a write that will check every entry at commit; with `reuse`, answers from the
 * entries last read when it has them all. Values are shared between writes: never change one.
 */
export async function readForCheck<T extends readonly unknown[]>(
  kv: Deno.Kv,
  keys: Deno.KvKey[],
  reuse: boolean,
): Promise<{ [K in keyof T]: Deno.KvEntryMaybe<T[K]> }> {
  type Entries = { [K in keyof T]: Deno.KvEntryMaybe<T[K]> };
  const memory = memoryOf(kv);
  const ids = keys.map(keyId);
  if (reuse) {
    const known = ids.map((id) => memory.get(id));
    if (known.every((e) => e !== undefined)) return known as unknown as Entries;
  }
  const entries = await kv.getMany(keys);
  entries.forEach((e, i) => memory.set(ids[i], e));
  return entries as unknown as Entries;
}
