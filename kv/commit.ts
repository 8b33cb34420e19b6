import { ApiError } from "../domain/errors.ts";

/**
 * Thrown when a commit keeps losing to concurrent writers (other requests, other instances, the
 * CLI) until its deadline: nothing was written, and the client may simply try again (503).
 */
export class ConflictError extends ApiError {
  constructor(what: string) {
    super(
      503,
      `${what}: the store is busy with concurrent changes and nothing was written; try again.`,
      undefined,
      { "Retry-After": "1" },
    );
  }
}

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
