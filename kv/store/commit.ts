import { ConflictError } from "../../core/errors.ts";
import { chunks } from "../../core/chunks.ts";
import type { Plan } from "./plan.ts";

/** What makes plans: the store, as the helpers below need it. */
export interface Planner {
  atomic(): Plan;
}

/** What reads several keys at once: the store, as `getAll` needs it. */
export interface ManyReader {
  getMany<T extends readonly unknown[]>(
    keys: readonly [...{ [K in keyof T]: Deno.KvKey }],
  ): Promise<{ [K in keyof T]: Deno.KvEntryMaybe<T[K]> }>;
}

/** Commits and throws ConflictError when a check failed. */
export async function commitOrThrow(op: Plan, what: string): Promise<string> {
  const res = await op.commit();
  if (!res.ok) throw new ConflictError(what);
  return res.versionstamp;
}

/** Reads any number of keys of one type (the store splits them to its limits). */
export function getAll<T>(kv: ManyReader, keyList: Deno.KvKey[]): Promise<Deno.KvEntryMaybe<T>[]> {
  return kv.getMany<T[]>(keyList) as Promise<Deno.KvEntryMaybe<T>[]>;
}

/**
 * Writes `items` in commits of at most `size`, one after the other, `add` putting each item's
 * checks and mutations into its commit: for more writes than one commit may hold.
 */
export async function commitInBatches<T>(
  kv: Planner,
  items: readonly T[],
  size: number,
  add: (op: Plan, item: T) => void,
): Promise<void> {
  for (const batch of chunks(items, size)) {
    const op = kv.atomic();
    for (const item of batch) add(op, item);
    await op.commit();
  }
}

/**
 * Deletes every key under `prefixes`, 500 to a commit: for records nothing writes again (a
 * tombstone's reactions and votes), so no check is needed.
 */
export async function deleteUnder(
  kv: Planner & { list(selector: { prefix: Deno.KvKey }): Deno.KvListIterator<unknown> },
  prefixes: Deno.KvKey[],
): Promise<void> {
  let op = kv.atomic();
  let pending = 0;
  for (const prefix of prefixes) {
    for await (const e of kv.list({ prefix })) {
      op.delete(e.key);
      if (++pending === 500) {
        await op.commit();
        [op, pending] = [kv.atomic(), 0];
      }
    }
  }
  if (pending) await op.commit();
}
