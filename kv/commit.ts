import { ConflictError } from "../core/errors.ts";
import { chunks } from "../core/chunks.ts";
import { GET_MANY_MAX } from "./limits.ts";

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
  const results = await Promise.all(chunks(keyList, GET_MANY_MAX).map((c) => kv.getMany<T[]>(c)));
  return results.flat() as Deno.KvEntryMaybe<T>[];
}

/**
 * Writes `items` in commits of at most `size`, one after the other, `add` putting each item's
 * checks and mutations into its commit: for more writes than one commit may hold.
 */
export async function commitInBatches<T>(
  kv: Deno.Kv,
  items: readonly T[],
  size: number,
  add: (op: Deno.AtomicOperation, item: T) => void,
): Promise<void> {
  for (const batch of chunks(items, size)) {
    const op = kv.atomic();
    for (const item of batch) add(op, item);
    await op.commit();
  }
}

type Commit = Deno.AtomicOperation["commit"];

/**
 * Adds `hook` to the operation's hooks of one kind (`hooks`); the first of them wraps its commit
 * once with `wrap`, which runs every hook added by then.
 */
function hookCommit<T>(
  hooks: WeakMap<Deno.AtomicOperation, T[]>,
  op: Deno.AtomicOperation,
  hook: T,
  wrap: (commit: Commit, all: T[]) => Commit,
): void {
  const known = hooks.get(op);
  if (known) {
    known.push(hook);
    return;
  }
  const all = [hook];
  hooks.set(op, all);
  op.commit = wrap(op.commit.bind(op), all);
}

const preparations = new WeakMap<Deno.AtomicOperation, (() => void)[]>();

/**
 * Runs `prepare` just before the operation commits, for writes that sum up everything the
 * operation holds by then (one marker for a commit's events instead of one per event).
 */
export function beforeCommit(op: Deno.AtomicOperation, prepare: () => void): void {
  hookCommit(preparations, op, prepare, (commit, waiting) => () => {
    for (const run of waiting.splice(0)) run();
    return commit();
  });
}

/** What `afterCommit` callbacks learn: the commit's versionstamp, or null when it failed. */
export type Landed = (versionstamp: string | null) => void;

const landings = new WeakMap<Deno.AtomicOperation, Landed[]>();

/**
 * Runs `then` once the operation's commit is settled: with the commit's versionstamp when it
 * landed, null when it failed or threw. The commit is wrapped once, however many callers wait.
 */
export function afterCommit(op: Deno.AtomicOperation, then: Landed): void {
  hookCommit(landings, op, then, (commit, waiting) => async () => {
    let res: Deno.KvCommitResult | Deno.KvCommitError | undefined;
    try {
      res = await commit();
      return res;
    } finally {
      const versionstamp = res?.ok ? res.versionstamp : null;
      for (const landed of waiting) landed(versionstamp);
    }
  });
}
