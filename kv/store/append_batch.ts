/**
 * What one commit of a channel's appends can take (kv/store/appender.ts): the store's checks and
 * mutations per commit (kv/store/limits.ts), 800 KiB, and a bound on waiting.
 */
import type { Message } from "../../core/types.ts";
import { keys } from "../keys.ts";
import { keyId } from "./key_id.ts";
import { MAX_MUTATIONS } from "./limits.ts";
import { inTimeline } from "../message_copies.ts";
import { eventWrites } from "../outbox/outbox.ts";
import type { Plan } from "./plan.ts";

export interface AppendOptions {
  /** The caller's preconditions (channel unchanged, still a member, ...), re-checked at commit. */
  checks: Deno.AtomicCheck[];
  /** The change's other writes and events (membership, message.created), in the same commit. */
  with?: Plan;
  /**
   * Index the draft's client_uuid, so that a resend finds this message. Only for a key the client
   * chose: one the service generated can never come back, and the index costs every post.
   */
  indexClientUuid?: boolean;
  /** Commit on its own: `with` writes keys that other appends may check (membership). */
  alone?: boolean;
}

/**
 * What a commit may hold: the store's checks and mutations (kv/store/limits.ts), 800 KiB, and a bound
 * on waiting.
 */
const MAX_BATCH = 64;
const MAX_BYTES = 400_000;
/**
 * An append's own mutations at most, besides those of `with`: its copies (message, timeline, thread),
 * its client_uuid, the lengths of its lists, and its share of the stream markers.
 */
const APPEND_WRITES = 9;

/** An append waiting for its commit. */
export interface Request {
  draft: Message;
  opts: AppendOptions;
  tries: number;
  /** Past this, losing the list again gives up with a ConflictError (503, nothing written). */
  deadline: number;
  resolve(stored: Message | null): void;
  reject(error: unknown): void;
}

/** The length keys of the lists a draft goes into, and its channel's `ts` cursor. */
export function listsOf(draft: Message): Deno.KvKey[] {
  const out: Deno.KvKey[] = [keys.channelTs(draft.channel_id)];
  if (inTimeline(draft)) out.push(keys.timelineLen(draft.channel_id));
  if (draft.thread_root_id) out.push(keys.threadLen(draft.thread_root_id));
  return out;
}

export function checksOf(r: Request): { check: Deno.AtomicCheck; exclusive: boolean }[] {
  const out = r.opts.checks.map((check) => ({ check, exclusive: false }));
  if (r.opts.indexClientUuid && r.draft.client_uuid) {
    const key = keys.clientUuid(r.draft.author.id, r.draft.client_uuid);
    out.push({ check: { key, versionstamp: null }, exclusive: true });
  }
  return out;
}

/** The caller checks of a batch, each key once (takeable saw to it that they agree). */
export function distinctChecks(batch: Request[]): Deno.AtomicCheck[] {
  const out = new Map<string, Deno.AtomicCheck>();
  for (const r of batch) for (const { check } of checksOf(r)) out.set(keyId(check.key), check);
  return [...out.values()];
}

/** Rough size of what an append writes: the message about three times over, and its event. */
const bytesOf = (r: Request) => 4 * (r.draft.body.length * 3 + 1_000);
const writesOf = (r: Request) => APPEND_WRITES + writesWith(r.opts.with);

/** The mutations a plan adds to a commit, its events' included (kv/outbox/outbox.ts). */
const writesWith = (plan: Plan | undefined) =>
  plan
    ? plan.mutations.length + plan.events.reduce((n, e) => n + eventWrites(e.heard.length), 0)
    : 0;

/**
 * How many requests from the head of `queue` one commit can take: within `maxChecks`, the
 * mutations and the size limit, `alone` ones by themselves, and no key checked twice at
 * different versionstamps or checked after an earlier request in the batch writes it.
 */
export function takeable(queue: Request[], maxChecks: number): number {
  const seen = new Map<string, { versionstamp: string | null; exclusive: boolean }>();
  const lists = new Set<string>();
  let bytes = 0;
  let writes = 0;
  let n = 0;
  for (const r of queue) {
    if (n > 0 && (r.opts.alone || queue[0].opts.alone)) break;
    if (n >= MAX_BATCH || (n > 0 && bytes + bytesOf(r) > MAX_BYTES)) break;
    if (n > 0 && writes + writesOf(r) > MAX_MUTATIONS) break;
    const mine = checksOf(r);
    const clash = mine.some(({ check, exclusive }) => {
      const other = seen.get(keyId(check.key));
      return other && (exclusive || other.exclusive || other.versionstamp !== check.versionstamp);
    });
    const newLists = listsOf(r.draft).map(keyId).filter((k) => !lists.has(k));
    const newChecks = mine.filter(({ check }) => !seen.has(keyId(check.key))).length;
    if (n > 0 && (clash || seen.size + lists.size + newChecks + newLists.length > maxChecks)) {
      break;
    }
    for (const { check, exclusive } of mine) {
      seen.set(keyId(check.key), { versionstamp: check.versionstamp, exclusive });
    }
    for (const k of newLists) lists.add(k);
    bytes += bytesOf(r);
    writes += writesOf(r);
    n++;
  }
  return n;
}
