import { RecentMap } from "../../core/recent_map.ts";
import { backoff, CONTENTION_DEADLINE_MS } from "../../core/retry.ts";
import { ConflictError } from "../../core/errors.ts";
import type { Message } from "../../core/types.ts";
import { tsText } from "../../core/ids.ts";
import { keys } from "../keys.ts";
import { keyId } from "./key_id.ts";
import { inTimeline, putMessage } from "../message_copies.ts";
import { stampMessage } from "../outbox/outbox.ts";
import { getAll, type ManyReader, type Planner } from "./commit.ts";
import type { Plan } from "./plan.ts";
import {
  type AppendOptions,
  checksOf,
  distinctChecks,
  listsOf,
  type Request,
  takeable,
} from "./append_batch.ts";
import { appendBatchesSplit } from "../../core/metrics.ts";
import { errorFields, log } from "../../core/log.ts";

/** After this many lost commits in a row, a process claims a turn at the channel's lists. */
const CLAIM_AFTER = 3;
/** How long a claimed turn holds other processes' appends to the channel back. */
const TURN_MS = 10;

/** A claim on a channel's lists: other processes' appends wait until `until` (ms). */
interface Turn {
  owner: string;
  until: number;
}

/** A list's length as this process last committed or read it, with its key's versionstamp. */
interface Cursor {
  length: number;
  versionstamp: string | null;
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
 * writers take turns already (a local file, kv/store/write_turns.ts), a lost batch goes again at once
 * instead, without waiting and without claiming: the others can't commit until their turn.
 */
export class Appender {
  #queues = new Map<string, Request[]>();
  #cursors = new RecentMap<string, Cursor>(10_000);
  /** Turns other processes claimed, by channel, as last read. */
  #turns = new RecentMap<string, number>(1_000);
  readonly #id = crypto.randomUUID();

  constructor(private kv: AppendStore) {}

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
      const batch = queue.splice(0, takeable(queue, this.kv.maxChecks));
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
    // The writer this one lost to had the store's turn before it (kv/store/write_turns.ts): in this
    // process's turn, going again at once wins.
    if (this.kv.takesTurns) return;
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
    const take = (key: Deno.KvKey, atLeast = 0) => {
      const pos = Math.max(next.get(keyId(key))! + 1, atLeast);
      next.set(keyId(key), pos);
      return pos;
    };
    const nowMicros = Date.now() * 1000;
    const op = this.kv.atomic();
    const stored = batch.map((r) => {
      const m: Message = {
        ...r.draft,
        // Unique in the channel and increasing: the channel's appends take turns at its cursor.
        ts: tsText(take(keys.channelTs(r.draft.channel_id), nowMicros)),
        timeline_pos: inTimeline(r.draft) ? take(keys.timelineLen(r.draft.channel_id)) : null,
        thread_pos: r.draft.thread_root_id ? take(keys.threadLen(r.draft.thread_root_id)) : null,
      };
      putMessage(op, m);
      op.set(keys.messageTs(m.channel_id, m.ts!), m.id);
      stampMessage(r.opts.with, m);
      if (r.opts.indexClientUuid && m.client_uuid) {
        op.set(keys.clientUuid(m.author.id, m.client_uuid), m.id);
      }
      if (r.opts.with) op.include(r.opts.with);
      return m;
    });
    const checks = distinctChecks(batch);
    op.check(...checks);
    for (const key of lists) {
      op.check({ key, versionstamp: this.#cursors.get(keyId(key))!.versionstamp });
      op.set(key, new Deno.KvU64(BigInt(next.get(keyId(key))!)));
    }
    let result: Awaited<ReturnType<Plan["commit"]>>;
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

/** The store as an appender needs it (kv/store/store.ts). */
export interface AppendStore extends Planner, ManyReader {
  get<T = unknown>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>>;
  readonly maxChecks: number;
  readonly takesTurns: boolean;
}
