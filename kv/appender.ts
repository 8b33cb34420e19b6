import { RecentMap } from "../core/recent_map.ts";
import { backoff, CONTENTION_DEADLINE_MS } from "../core/retry.ts";
import { ConflictError } from "../core/errors.ts";
import type { Message } from "../core/types.ts";
import { keyId, keys } from "./keys.ts";
import { inTimeline, putMessage } from "./messages.ts";
import { MAX_MUTATIONS, maxChecks } from "./limits.ts";
import { getAll } from "./commit.ts";
import { takesTurns } from "./write_turns.ts";
import { appendBatchesSplit } from "../core/metrics.ts";
import { errorFields, log } from "../core/log.ts";

export interface AppendOptions {
  /** The caller's preconditions (channel unchanged, still a member, ...), re-checked at commit. */
  checks: Deno.AtomicCheck[];
  /** The change's other writes (membership, events), in the same commit as the message. */
  extend?: (op: Deno.AtomicOperation, stored: Message) => void;
  /** How many mutations `extend` adds at most, so that a shared commit stays within its limit. */
  writes?: number;
  /**
   * Index the draft's client_uuid, so that a resend finds this message. Only for a key the client
   * chose: one the service generated can never come back, and the index costs every post.
   */
  indexClientUuid?: boolean;
  /** Commit on its own: `extend` writes keys that other appends may check (membership). */
  alone?: boolean;
}

/** After this many lost commits in a row, a process claims a turn at the channel's lists. */
const CLAIM_AFTER = 3;
/** How long a claimed turn holds other processes' appends to the channel back. */
const TURN_MS = 10;

/** A claim on a channel's lists: other processes' appends wait until `until` (ms). */
interface Turn {
  owner: string;
  until: number;
}

/**
 * What a commit may hold: the store's checks and mutations (kv/limits.ts), 800 KiB, and a bound
 * on waiting.
 */
const MAX_BATCH = 64;
const MAX_BYTES = 400_000;
/**
 * An append's own mutations at most, besides `writes`: its copies (message, timeline, thread),
 * its client_uuid, the lengths of its lists, and its share of the stream markers.
 */
const APPEND_WRITES = 8;

interface Request {
  draft: Message;
  opts: AppendOptions;
  tries: number;
  /** Past this, losing the list again gives up with a ConflictError (503, nothing written). */
  deadline: number;
  resolve(stored: Message | null): void;
  reject(error: unknown): void;
}

/** A list's length as this process last committed or read it, with its key's versionstamp. */
interface Cursor {
  length: number;
  versionstamp: string | null;
}

/** The length keys of the lists a draft goes into. */
function listsOf(draft: Message): Deno.KvKey[] {
  const out: Deno.KvKey[] = [];
  if (inTimeline(draft)) out.push(keys.timelineLen(draft.channel_id));
  if (draft.thread_root_id) out.push(keys.threadLen(draft.thread_root_id));
  return out;
}

function checksOf(r: Request): { check: Deno.AtomicCheck; exclusive: boolean }[] {
  const out = r.opts.checks.map((check) => ({ check, exclusive: false }));
  if (r.opts.indexClientUuid && r.draft.client_uuid) {
    const key = keys.clientUuid(r.draft.author.id, r.draft.client_uuid);
    out.push({ check: { key, versionstamp: null }, exclusive: true });
  }
  return out;
}

/**
 * Appends messages to their channel's timeline (and threads) with dense positions, committing
 * each channel's waiting appends together: one commit, one `check` per list length instead of
 * one per slot. A commit costs about as much as three small ones would, so under load this is
 * what lets a channel take more posts per second than its store takes commits.
 *
 * One commit per channel is in flight at a time; what arrives meanwhile forms the next one,
 * so a lone post waits for nothing. Each list's length key is checked against the versionstamp
 * this process last saw, so another writer (a second instance, the CLI) makes the commit fail
 * instead of sharing a position; the batch then re-reads and goes again.
 *
 * A writer that commits back to back never re-reads, while the other re-reads before each try
 * and keeps losing the moment in between: it would starve. So a process that lost CLAIM_AFTER
 * times in a row claims a turn (TURN_MS) at the channel, and touches its lists so that everyone
 * else's next commit fails and, re-reading, finds the turn and waits it out. Where the store's
 * writers take turns already (a local file, kv/write_turns.ts), a lost batch goes again at once
 * instead, without waiting and without claiming: the others can't commit until their turn.
 */
class Appender {
  #queues = new Map<string, Request[]>();
  #cursors = new RecentMap<string, Cursor>(10_000);
  /** Turns other processes claimed, by channel, as last read. */
  #turns = new RecentMap<string, number>(1_000);
  readonly #id = crypto.randomUUID();

  constructor(private kv: Deno.Kv) {}

  append(draft: Message, opts: AppendOptions): Promise<Message | null> {
    return new Promise((resolve, reject) => {
      const deadline = Date.now() + CONTENTION_DEADLINE_MS;
      const request = { draft, opts, tries: 0, deadline, resolve, reject };
      const queue = this.#queues.get(draft.channel_id);
      if (queue) {
        queue.push(request);
        return;
      }
      this.#queues.set(draft.channel_id, [request]);
      void this.#drain(draft.channel_id);
    });
  }

  async #drain(channelId: string): Promise<void> {
    const queue = this.#queues.get(channelId)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, takeable(queue, maxChecks(this.kv)));
      try {
        const retry = await this.#commit(batch);
        queue.unshift(...retry);
        if (retry.length > 0) await this.#afterLosing(channelId, retry);
      } catch (e) {
        for (const r of batch) r.reject(e);
      }
    }
    this.#queues.delete(channelId);
  }

  /**
   * Lost to another writer: wait out a turn it claimed, or claim one after losing too often, or
   * back off so as not to go again in lockstep with it.
   */
  async #afterLosing(channelId: string, retry: Request[]) {
    const turn = this.#turns.get(channelId) ?? 0;
    if (turn > Date.now()) {
      await new Promise((r) => setTimeout(r, turn - Date.now()));
      return;
    }
    // The writer this one lost to had the store's turn before it (kv/write_turns.ts): in this
    // process's turn, going again at once wins.
    if (takesTurns(this.kv)) return;
    const tries = Math.max(...retry.map((r) => r.tries));
    if (tries >= CLAIM_AFTER) await this.#claim(channelId, retry);
    else await backoff(tries);
  }

  /**
   * Claims a turn at the channel: writes it and adds 0 to the lengths of its lists, so that every
   * other writer's next commit fails and its re-read finds the turn. This process reads the
   * lengths again before its own next try.
   */
  async #claim(channelId: string, retry: Request[]) {
    const lists = [
      ...new Map(retry.flatMap((r) => listsOf(r.draft)).map((k) => [keyId(k), k])).values(),
    ];
    const turn: Turn = { owner: this.#id, until: Date.now() + TURN_MS };
    const op = this.kv.atomic().set(keys.appendTurn(channelId), turn, { expireIn: 60_000 });
    for (const key of lists) op.sum(key, 0n);
    await op.commit();
    for (const key of lists) this.#cursors.delete(keyId(key));
  }

  /** Commits `batch`; returns the requests to try again. */
  async #commit(batch: Request[]): Promise<Request[]> {
    const lists = [
      ...new Map(batch.flatMap((r) => listsOf(r.draft)).map((k) => [keyId(k), k])).values(),
    ];
    await this.#load(lists);
    const next = new Map(lists.map((k) => [keyId(k), this.#cursors.get(keyId(k))!.length]));
    const take = (key: Deno.KvKey) => {
      const pos = next.get(keyId(key))! + 1;
      next.set(keyId(key), pos);
      return pos;
    };
    const op = this.kv.atomic();
    const stored = batch.map((r) => {
      const m: Message = {
        ...r.draft,
        timeline_pos: inTimeline(r.draft) ? take(keys.timelineLen(r.draft.channel_id)) : null,
        thread_pos: r.draft.thread_root_id ? take(keys.threadLen(r.draft.thread_root_id)) : null,
      };
      putMessage(op, m);
      if (r.opts.indexClientUuid && m.client_uuid) {
        op.set(keys.clientUuid(m.author.id, m.client_uuid), m.id);
      }
      r.opts.extend?.(op, m);
      return m;
    });
    const checks = distinctChecks(batch);
    op.check(...checks);
    for (const key of lists) {
      op.check({ key, versionstamp: this.#cursors.get(keyId(key))!.versionstamp });
      op.set(key, new Deno.KvU64(BigInt(next.get(keyId(key))!)));
    }
    let result: Deno.KvCommitResult | Deno.KvCommitError;
    try {
      result = await op.commit();
    } catch (e) {
      // Over a limit `takeable` misjudged: each goes again on its own.
      if (batch.length === 1) throw e;
      appendBatchesSplit.inc();
      log.warn("KV: a batch of posts went over a commit's limits; they go again one by one", {
        posts: batch.length,
        ...errorFields(e),
      });
      return batch.map((r) => ({ ...r, opts: { ...r.opts, alone: true } }));
    }
    if (result.ok) {
      for (const key of lists) {
        this.#remember(key, { length: next.get(keyId(key))!, versionstamp: result.versionstamp });
      }
      batch.forEach((r, i) => r.resolve(stored[i]));
      return [];
    }
    return await this.#sortOut(batch, checks, lists);
  }

  /**
   * After a failed commit: re-reads what it checked. Requests whose own preconditions no
   * longer hold get null (their caller reads again and decides); list lengths another writer
   * moved are reloaded; the rest go again.
   */
  async #sortOut(
    batch: Request[],
    checks: Deno.AtomicCheck[],
    lists: Deno.KvKey[],
  ): Promise<Request[]> {
    const channelId = batch[0].draft.channel_id;
    const [turn, read] = await Promise.all([
      this.kv.get<Turn>(keys.appendTurn(channelId)),
      getAll(this.kv, [...checks.map((c) => c.key), ...lists]),
    ]);
    if (turn.value && turn.value.owner !== this.#id) this.#turns.set(channelId, turn.value.until);
    const now = new Map(read.map((e) => [keyId(e.key), e]));
    for (const key of lists) {
      const entry = now.get(keyId(key))!;
      this.#remember(key, { length: lengthOf(entry), versionstamp: entry.versionstamp });
    }
    const retry: Request[] = [];
    for (const r of batch) {
      const holds = checksOf(r).every(({ check }) =>
        now.get(keyId(check.key))?.versionstamp === check.versionstamp
      );
      r.tries++;
      if (!holds) r.resolve(null);
      else if (Date.now() >= r.deadline) r.reject(new ConflictError("post message"));
      else retry.push(r);
    }
    return retry;
  }

  /** Reads the lengths of lists this process has no cursor for. */
  async #load(lists: Deno.KvKey[]): Promise<void> {
    const missing = lists.filter((k) => !this.#cursors.has(keyId(k)));
    if (missing.length === 0) return;
    const entries = await this.kv.getMany(missing);
    entries.forEach((e, i) =>
      this.#remember(missing[i], { length: lengthOf(e), versionstamp: e.versionstamp })
    );
  }

  #remember(key: Deno.KvKey, cursor: Cursor) {
    this.#cursors.set(keyId(key), cursor);
  }
}

const lengthOf = (e: Deno.KvEntryMaybe<unknown>) =>
  Number((e.value as Deno.KvU64 | null)?.value ?? 0n);

/** The caller checks of a batch, each key once (takeable saw to it that they agree). */
function distinctChecks(batch: Request[]): Deno.AtomicCheck[] {
  const out = new Map<string, Deno.AtomicCheck>();
  for (const r of batch) for (const { check } of checksOf(r)) out.set(keyId(check.key), check);
  return [...out.values()];
}

/** Rough size of what an append writes: the message about three times over, and its event. */
const bytesOf = (r: Request) => 4 * (r.draft.body.length * 3 + 1_000);
const writesOf = (r: Request) => APPEND_WRITES + (r.opts.writes ?? 0);

/**
 * How many requests from the head of `queue` one commit can take: within `maxChecks`, the
 * mutations and the size limit, `alone` ones by themselves, and no key checked twice at
 * different versionstamps or checked after an earlier request in the batch writes it.
 */
function takeable(queue: Request[], maxChecks: number): number {
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

const appenders = new WeakMap<Deno.Kv, Appender>();

/**
 * Appends a new message to its timeline and/or thread in one commit with `opts.extend`'s writes
 * (shared with other appends to the same channel). Returns the stored message, or null when one
 * of the caller's checks failed: it should read again and decide.
 */
export function appendMessage(
  kv: Deno.Kv,
  draft: Message,
  opts: AppendOptions,
): Promise<Message | null> {
  let appender = appenders.get(kv);
  if (!appender) appenders.set(kv, appender = new Appender(kv));
  return appender.append(draft, opts);
}
