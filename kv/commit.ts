import { ConflictError } from "../core/errors.ts";

/** Commits and throws ConflictError when a check failed. */
export async function commitOrThrow(op: Deno.AtomicOperation, what: string): Promise<string> {
  const res = await op.commit();
  if (!res.ok) throw new ConflictError(what);
  return res.versionstamp;
}

/** Reads up to any number of keys, 10 per getMany call (the KV limit), in parallel. */
export async function getAll<T>(
  kv: Deno.Kv,
  keyList: Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<T>[]> {
  const chunks: Deno.KvKey[][] = [];
  for (let i = 0; i < keyList.length; i += 10) chunks.push(keyList.slice(i, i + 10));
  const results = await Promise.all(chunks.map((c) => kv.getMany<T[]>(c)));
  return results.flat() as Deno.KvEntryMaybe<T>[];
}
