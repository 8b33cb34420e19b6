import type { OutboxEvent } from "../../core/types.ts";
import type { SocketPending } from "../../core/app_records.ts";
import type { DeliveryJob, HandedJobs, WebhookRoute } from "../../core/webhook_records.ts";

/** A subscription that hears an event, with its route's versionstamp as the write saw it. */
export interface Heard {
  id: string;
  version: string;
  /** Its route: a Socket Mode app's listener queues the event for its connections, not a job. */
  route?: Pick<WebhookRoute, "app">;
}

/** An event a plan writes: the outbox's record, where it happened, and who hears it. */
export interface PlannedEvent {
  event: OutboxEvent;
  /** Whether every human of the team sees its channel: it then goes into the open index too. */
  open: boolean;
  expireIn: number;
  /** The subscriptions it makes a delivery job for (none when it is restored from an export). */
  heard: Heard[];
}

/**
 * An event's first attempts leased to this process in one handed-jobs record, handed to its
 * engine once the commit landed, as jobs (none is written): `jobs` in the room the commit
 * reserved in its window, `waiting` for room.
 */
export interface Handed {
  event: OutboxEvent;
  jobs: DeliveryJob[];
  waiting: DeliveryJob[];
  record: { key: Deno.KvKey; value: HandedJobs };
}

/** Whether this process has a connection of a Socket Mode app to send its events on at once. */
export type SocketsHere = (appId: string) => boolean;

/** An event queued for a Socket Mode app in a commit, and whether it is claimed by this process. */
export interface QueuedSocket {
  appId: string;
  eventId: string;
  subscriptionId: string;
  claimed: boolean;
  /** Its record as the commit wrote it. */
  record: SocketPending;
}

/** What the store publishes on its bus when a plan with events landed (kv/store/store.ts). */
export interface Committed {
  versionstamp: string;
  events: OutboxEvent[];
  /** Teams whose event log the commit added to. */
  teams: string[];
  /** The events it queued for Socket Mode apps' connections. */
  sockets: QueuedSocket[];
}

/**
 * The delivery work a landed commit produces, put on the work pair (core/work_pair.ts) for this
 * process's engine: the jobs the commit leased to it, and the subscriptions whose redeliveries it
 * wrote.
 */
export interface CommitWork {
  versionstamp: string;
  handed: Handed[];
  redeliveries: string[];
}

/** What a commit returns: as Deno KV's, and the events that landed with it. */
export type Landed = (Deno.KvCommitResult & { events: OutboxEvent[] }) | Deno.KvCommitError;

/** Whoever commits a plan: the store. */
type EnqueueOptions = Parameters<Deno.AtomicOperation["enqueue"]>[1];

export interface Committer {
  commit(plan: Plan): Promise<Landed>;
}

/**
 * One commit, as a value: its checks, its mutations, its queue messages, and the outbox's
 * events with who hears them. The domain builds it; the store commits it whole (kv/store/store.ts),
 * writing the events' indexes, jobs and stream-log markers into the same commit, and says what
 * landed. Nothing runs inside the commit but what the plan holds.
 */
export class Plan {
  readonly checks: Deno.AtomicCheck[] = [];
  readonly mutations: Deno.KvMutation[] = [];
  /** Queue messages, as `Deno.AtomicOperation.enqueue` takes them. */
  readonly messages: { value: unknown; options?: EnqueueOptions }[] = [];
  readonly events: PlannedEvent[] = [];
  readonly redeliveries: string[] = [];

  constructor(private readonly committer: Committer) {}

  check(...checks: Deno.AtomicCheck[]): this {
    this.checks.push(...checks);
    return this;
  }

  set(key: Deno.KvKey, value: unknown, options?: { expireIn?: number }): this {
    this.mutations.push({ type: "set", key, value, expireIn: options?.expireIn });
    return this;
  }

  delete(key: Deno.KvKey): this {
    this.mutations.push({ type: "delete", key });
    return this;
  }

  sum(key: Deno.KvKey, n: bigint): this {
    this.mutations.push({ type: "sum", key, value: new Deno.KvU64(n) });
    return this;
  }

  enqueue(value: unknown, options?: EnqueueOptions): this {
    this.messages.push({ value, options });
    return this;
  }

  /** An event of the outbox, with the jobs of the subscriptions that hear it (kv/outbox/outbox.ts). */
  event(planned: PlannedEvent): this {
    this.events.push(planned);
    return this;
  }

  /** Redeliveries of the subscription are written: an engine of this process takes them now. */
  wake(subscriptionId: string): this {
    this.redeliveries.push(subscriptionId);
    return this;
  }

  /** Adds another plan's checks, writes and events to this one. */
  include(other: Plan): this {
    this.checks.push(...other.checks);
    this.mutations.push(...other.mutations);
    this.messages.push(...other.messages);
    this.events.push(...other.events);
    this.redeliveries.push(...other.redeliveries);
    return this;
  }

  /** Hands the plan to the store, which commits it. */
  commit(): Promise<Landed> {
    return this.committer.commit(this);
  }
}
