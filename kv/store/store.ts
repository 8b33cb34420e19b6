import { Bus } from "../../core/bus.ts";
import { KeyedLock } from "../../core/keyed_lock.ts";
import type { CacheKind, LockKind } from "../../core/memory.ts";
import { RecentMap } from "../../core/recent_map.ts";
import { ConflictError } from "../../core/errors.ts";
import { chunks } from "../../core/chunks.ts";
import { backoff, CONTENTION_DEADLINE_MS } from "../../core/retry.ts";
import type { Message } from "../../core/types.ts";
import { Appender } from "./appender.ts";
import type { AppendOptions } from "./append_batch.ts";
import { CheckedReads } from "./checked_reads.ts";
import { GET_MANY_MAX, kindOf, type StoreKind } from "./limits.ts";
import type { WorkProducer } from "../../core/work_pair.ts";
import { type JobRoom, releaseHanded, writePlannedEvents } from "../outbox/outbox.ts";
import { type Committed, type CommitWork, type Landed, Plan, type SocketsHere } from "./plan.ts";
import { probeQueues } from "./queue_support.ts";
import { ReadCoalescer } from "./read_coalescer.ts";
import { LogMover, writeMarkers } from "../stream/stream_markers.ts";
import type { WriteTurns } from "./write_turns.ts";

type Consistency = { consistency?: Deno.KvConsistencyLevel };

/** How a store was opened: where, and whether its writers take turns on a lock file. */
export interface StoreOptions {
  /** The KV_PATH it was opened at (unset on Deno Deploy): what kind of store it is. */
  path: string | undefined;
  turns?: WriteTurns;
}

/**
 * The store as the service uses it: one object per opened Deno KV, made where the process starts
 * (main.ts, cli/admin.ts) and carried in the context. It knows what kind of store it is and its
 * limits; it commits plans (kv/store/plan.ts), in turns with the other processes on the same file and
 * retried while SQLite is locked; it shares read round trips; it owns every cache and lock the
 * service keeps about the store; and it publishes what its commits wrote on `committed`, for the
 * delivery engine and the stream hub to hear. Nothing else holds the Deno KV it wraps.
 */
export class Store {
  readonly kind: StoreKind;
  /** The events each landed commit wrote, for the stream hub. */
  readonly committed = new Bus<Committed>();
  readonly #kv: Deno.Kv;
  readonly #turns: WriteTurns | undefined;
  readonly #reads: ReadCoalescer;
  readonly #checked: CheckedReads;
  readonly #appender: Appender;
  readonly #mover = new LogMover(this);
  readonly #underWay = new Set<Promise<unknown>>();
  readonly #caches = new Map<object, RecentMap<string, unknown>>();
  readonly #locks = new Map<LockKind, KeyedLock>();
  #work: WorkProducer<CommitWork, JobRoom> | undefined;
  #socketsHere: SocketsHere | null = null;
  #queues = true;

  constructor(kv: Deno.Kv, { path, turns }: StoreOptions) {
    this.#kv = kv;
    this.#turns = turns;
    this.kind = kindOf(path);
    this.#reads = new ReadCoalescer((keys) => kv.getMany(keys), this.kind.readWaves);
    this.#checked = new CheckedReads((keys) => this.getMany(keys));
    this.#appender = new Appender(this);
  }

  /** Checks one commit may carry. */
  get maxChecks(): number {
    return this.kind.maxChecks;
  }

  /** Whether the writers of this store take turns (a local file, kv/store/write_turns.ts). */
  get takesTurns(): boolean {
    return this.#turns !== undefined;
  }

  /** Whether commits may carry queue messages (kv/store/queue_support.ts). */
  get queues(): boolean {
    return this.#queues;
  }

  /** Finds out whether the store delivers queue messages; none are sent when it does not. */
  async probeQueues(path: string | undefined): Promise<void> {
    this.#queues = await probeQueues(this.#kv, path);
  }

  /** No queue messages from now on. */
  forgoQueues(): void {
    this.#queues = false;
  }

  get<T = unknown>(key: Deno.KvKey, opts?: Consistency): Promise<Deno.KvEntryMaybe<T>> {
    if (opts?.consistency === "eventual") return this.#kv.get<T>(key, opts);
    return this.#reads.read([key]).then(([entry]) => entry as Deno.KvEntryMaybe<T>);
  }

  /**
   * Any number of keys: Deno KV reads at most GET_MANY_MAX a call, so more are read in parts of
   * that size at once (each part one snapshot, not the whole), never refused.
   */
  getMany<T extends readonly unknown[]>(
    keys: readonly [...{ [K in keyof T]: Deno.KvKey }],
    opts?: Consistency,
  ): Promise<{ [K in keyof T]: Deno.KvEntryMaybe<T[K]> }> {
    type Entries = { [K in keyof T]: Deno.KvEntryMaybe<T[K]> };
    if (keys.length <= GET_MANY_MAX) return this.#getFew(keys, opts) as Promise<Entries>;
    return Promise.all(chunks([...keys], GET_MANY_MAX).map((part) => this.#getFew(part, opts)))
      .then((parts) => parts.flat() as unknown as Entries);
  }

  /** At most GET_MANY_MAX keys, in one of Deno KV's calls (shared with others' reads). */
  #getFew(keys: readonly Deno.KvKey[], opts?: Consistency): Promise<Deno.KvEntryMaybe<unknown>[]> {
    if (opts?.consistency === "eventual" || keys.length === 0) return this.#kv.getMany(keys, opts);
    return this.#reads.read([...keys]);
  }

  list<T = unknown>(
    selector: Deno.KvListSelector,
    opts?: Deno.KvListOptions,
  ): Deno.KvListIterator<T> {
    return this.#kv.list<T>(selector, opts);
  }

  /**
   * Reads `keys` for a write that will check every entry at commit; with `reuse`, answers from the
   * entries last read when it has them all (kv/store/checked_reads.ts). Never change a value read here.
   */
  readForCheck<T extends readonly unknown[]>(
    keys: Deno.KvKey[],
    reuse: boolean,
  ): Promise<{ [K in keyof T]: Deno.KvEntryMaybe<T[K]> }> {
    return this.#checked.read(keys, reuse) as Promise<{ [K in keyof T]: Deno.KvEntryMaybe<T[K]> }>;
  }

  /**
   * This process's cache of `kind` for this store. What it holds may be stale: a cache is only
   * ever a starting point that a versionstamp or a commit's check confirms.
   */
  cache<V>(kind: CacheKind<V>): RecentMap<string, V> {
    const kept = this.#caches.get(kind) as RecentMap<string, V> | undefined;
    if (kept) return kept;
    const made = new RecentMap<string, V>(kind.max, kind.weigh);
    this.#caches.set(kind, made as RecentMap<string, unknown>);
    return made;
  }

  /** This process's locks of `kind` on this store's records. */
  lock(kind: LockKind): KeyedLock {
    let lock = this.#locks.get(kind);
    if (!lock) this.#locks.set(kind, lock = new KeyedLock());
    return lock;
  }

  /** A new, empty plan for one commit to this store. */
  atomic(): Plan {
    return new Plan(this);
  }

  /** Writes one key; it checks nothing, so it lands (or throws). */
  set(key: Deno.KvKey, value: unknown, opts?: { expireIn?: number }): Promise<Deno.KvCommitResult> {
    return this.atomic().set(key, value, opts).commit() as Promise<Deno.KvCommitResult>;
  }

  /** Deletes one key; it checks nothing, so it lands (or throws). */
  delete(key: Deno.KvKey): Promise<Deno.KvCommitResult> {
    return this.atomic().delete(key).commit() as Promise<Deno.KvCommitResult>;
  }

  /**
   * Appends a message to its timeline and/or thread, in a commit it may share with other appends
   * to the channel (kv/store/appender.ts). Null when one of the caller's checks failed.
   */
  append(draft: Message, opts: AppendOptions): Promise<Message | null> {
    return this.#appender.append(draft, opts);
  }

  /**
   * Commits a plan whole: its writes, and for its events their indexes, jobs (leased to this
   * process's engine while it has room) and stream-log markers. A commit SQLite finds locked is
   * tried again at once, without waiting out its busy timeout, when another process on the same
   * file would otherwise deadlock with this one; one that still fails after
   * CONTENTION_DEADLINE_MS wrote nothing and is a ConflictError (503 with Retry-After).
   */
  commit(plan: Plan): Promise<Landed> {
    const done = this.#commit(plan);
    this.#underWay.add(done);
    done.finally(() => this.#underWay.delete(done)).catch(() => {});
    return done;
  }

  async #commit(plan: Plan): Promise<Landed> {
    const op = this.#kv.atomic().check(...plan.checks).mutate(...plan.mutations);
    for (const { value, options } of plan.messages) op.enqueue(value, options);
    const room = this.#work?.room();
    const { handed, sockets } = writePlannedEvents(op, plan.events, {
      room,
      socketsHere: this.#socketsHere,
    });
    const listed = plan.events.filter((p) => p.event.listed !== false);
    const markers = listed.length > 0 ? writeMarkers(op, listed) : null;
    let res: Deno.KvCommitResult | Deno.KvCommitError;
    try {
      res = await this.#retryLocked(() => op.commit());
    } catch (e) {
      releaseHanded(room, handed);
      throw e;
    }
    if (!res.ok) {
      releaseHanded(room, handed);
      return res;
    }
    const events = plan.events.map((p) => p.event);
    if (markers) this.#mover.landed(markers, res.versionstamp);
    const { versionstamp } = res;
    if (handed.length > 0 || plan.redeliveries.length > 0) {
      this.#work?.put({ versionstamp, handed, redeliveries: plan.redeliveries });
    }
    if (events.length > 0) {
      const teams = markers ? [...markers.keys()] : [];
      this.committed.publish({ versionstamp, events, teams, sockets });
    }
    return { ...res, events };
  }

  async #retryLocked<T>(commit: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + CONTENTION_DEADLINE_MS;
    for (let tries = 1;; tries++) {
      try {
        return await (this.#turns ? this.#turns.run(commit) : commit());
      } catch (e) {
        if (!/database is locked/.test(String(e))) throw e;
        if (Date.now() >= deadline) throw new ConflictError("commit");
        await backoff(tries);
      }
    }
  }

  /**
   * Where this store's commits put the delivery work they produce (the work pair made where the
   * process starts): the jobs of its own commits are written leased to the consumer while it has
   * room (kv/outbox/outbox.ts), and handed to it once they land.
   */
  produceInto(work: WorkProducer<CommitWork, JobRoom>): void {
    this.#work = work;
  }

  /**
   * What says whether this process holds a connection of a Socket Mode app (its socket hub, made
   * where the process starts): the events of its own commits for such an app are written claimed
   * by it, and sent at once when they land.
   */
  sendSocketsFrom(here: SocketsHere): void {
    this.#socketsHere = here;
  }

  listenQueue(handler: (message: unknown) => Promise<void> | void): Promise<void> {
    return this.#kv.listenQueue(handler);
  }

  /**
   * Settles once the commits under way are done, retries included, and the events committed so
   * far are moved into the log: before closing, so that a write made off a request's path (a
   * token's last use) is not cut off, nor left waiting.
   */
  async settled(): Promise<void> {
    await this.#mover.settled;
    while (this.#underWay.size > 0) await Promise.allSettled([...this.#underWay]);
  }

  close(): void {
    this.#turns?.close();
    this.#kv.close();
  }
}
