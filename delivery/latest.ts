import { envelope } from "./sign.ts";
import type { Message, OutboxEvent } from "../core/types.ts";
import { erasedBy, messageIdOf } from "../domain/messages/erasure.ts";
import type { Subscription } from "../core/webhook_records.ts";
import { keys } from "../kv/keys.ts";
import { RecentMap } from "../core/recent_map.ts";
import { getAll } from "../kv/store/commit.ts";
import type { Store } from "../kv/store/store.ts";

/**
 * How old a read of a subscription an attempt may act on: a change made elsewhere (a delete, a
 * disable, a rotated secret) reaches every attempt within this, as it reaches the event stream.
 */
const FRESH_MS = 250;

interface Read {
  /** When it started. */
  at: number;
  entry: Promise<Deno.KvEntry<Subscription> | null>;
}

/**
 * The newest version of each subscription this process has seen. Every attempt acts on a read
 * of the subscription at most FRESH_MS old, so on what any process changed before that; a read
 * that started before this process's own latest commit never takes it back in time. The recorder
 * commits against the version it wrote last, so its commits don't fail each other's checks;
 * only a change from elsewhere (delete, enable, rotate, another process) makes one retry.
 */
export class LatestSubscriptions {
  readonly #known = new Map<string, Deno.KvEntry<Subscription>>();
  readonly #reads = new RecentMap<string, Read>(4_096);

  /**
   * The subscription as read at most FRESH_MS ago, or as this process wrote it since, and no
   * older than `atLeast` (the versionstamp the work was made against); null when deleted. A
   * read under way is shared, so a busy subscription costs one read per FRESH_MS, not one per
   * attempt (on a remote store, a round trip each).
   */
  async fresh(
    kv: Store,
    id: string,
    atLeast?: string,
  ): Promise<Deno.KvEntry<Subscription> | null> {
    const now = Date.now();
    let read = this.#reads.get(id);
    if (!read || read.at < now - FRESH_MS) read = this.#read(kv, id, now);
    let entry = await read.entry;
    // A copy older than what the work was made against: the change since must not be missed.
    if (entry && atLeast && this.#newer(entry).versionstamp < atLeast) {
      entry = await this.#read(kv, id, Date.now()).entry;
    }
    return entry && this.#newer(entry);
  }

  #read(kv: Store, id: string, at: number): Read {
    const entry = kv.get<Subscription>(keys.webhook(id)).then((e) => this.freshest(e));
    const read = { at, entry };
    this.#reads.set(id, read);
    entry.catch(() => this.#reads.get(id) === read && this.#reads.delete(id));
    return read;
  }

  /** The newer of what was just read and what this process wrote last; null when deleted. */
  freshest(read: Deno.KvEntryMaybe<Subscription>): Deno.KvEntry<Subscription> | null {
    const id = read.key[1] as string;
    if (read.versionstamp === null) {
      this.#known.delete(id);
      return null;
    }
    const entry = this.#newer(read as Deno.KvEntry<Subscription>);
    this.#known.set(id, entry);
    return entry;
  }

  #newer(entry: Deno.KvEntry<Subscription>): Deno.KvEntry<Subscription> {
    const known = this.#known.get(entry.value.id);
    return known && known.versionstamp > entry.versionstamp ? known : entry;
  }

  /** Records what this process just committed. */
  wrote(entry: Deno.KvEntry<Subscription>): void {
    const known = this.#known.get(entry.value.id);
    if (!known || known.versionstamp <= entry.versionstamp) this.#known.set(entry.value.id, entry);
  }

  /** The newest version this process knows of, if any. */
  current(id: string): Deno.KvEntry<Subscription> | undefined {
    return this.#known.get(id);
  }
}

/** How old an event's first attempt may be and still be sent as the event was written. */
const AS_WRITTEN_MS = 2_000;

/**
 * Events read or committed lately, by id: events never change, so a copy is as good. The message
 * one carries may be deleted since, though: `asItIsNow` reads that for each attempt.
 */
export class RecentEvents {
  readonly #events: RecentMap<string, OutboxEvent>;
  readonly #reading = new Map<string, Promise<OutboxEvent | null>>();
  readonly #messages = new Map<string, Promise<Message | null>>();
  readonly #bodies: RecentMap<string, { event: OutboxEvent; body: string }>;

  constructor(max = 4_096) {
    this.#events = new RecentMap(max);
    this.#bodies = new RecentMap(max);
  }

  /**
   * The JSON body of a delivery of `event`, as it stands (erased or not): the same bytes for
   * every attempt and subscription of that copy, made once.
   */
  body(event: OutboxEvent): string {
    const known = this.#bodies.get(event.id);
    if (known?.event === event) return known.body;
    const body = envelope(event);
    this.#bodies.set(event.id, { event, body });
    return body;
  }

  /** The event from the copy, else read, one read shared by all who ask meanwhile. */
  load(kv: Store, id: string): OutboxEvent | Promise<OutboxEvent | null> {
    const known = this.#events.get(id);
    if (known) return known;
    return this.#reading.get(id) ?? this.#read(kv, [id])[0];
  }

  /**
   * Reads the events of a batch of jobs that this process has no copy of, in getMany calls of
   * 10: a batch costs a round trip or two, not one per delivery. Failures are left to `load`.
   */
  async loadMany(kv: Store, ids: string[]): Promise<void> {
    const wanted = [...new Set(ids)].filter((id) =>
      !this.#events.has(id) && !this.#reading.has(id)
    );
    await Promise.allSettled(this.#read(kv, wanted));
  }

  #read(kv: Store, ids: string[]): Promise<OutboxEvent | null>[] {
    const entries = getAll<OutboxEvent>(kv, ids.map((id) => keys.event(id)));
    return ids.map((id, i) => {
      const reading = entries
        .then((read) => {
          const value = read[i].value;
          if (value) this.add(value);
          return value;
        })
        .finally(() => this.#reading.delete(id));
      this.#reading.set(id, reading);
      return reading;
    });
  }

  /**
   * The event as an attempt starting now must send it: with its message's tombstone if that
   * message has been deleted (domain/messages/erasure.ts). One read of the message, shared by the
   * attempts that ask while it is under way (an event's subscriptions, together). A first
   * attempt made as the event is written reads nothing: a delete in those moments races the
   * send anyway, and it is most of the work (measured: a read per event cost a subscription's
   * deliveries a quarter of their rate).
   */
  async asItIsNow(kv: Store, event: OutboxEvent, first: boolean): Promise<OutboxEvent> {
    const id = messageIdOf(event);
    if (id === null) return event;
    if (first && Date.now() - Date.parse(event.created_at) < AS_WRITTEN_MS) return event;
    let reading = this.#messages.get(id);
    if (!reading) {
      reading = kv.get<Message>(keys.message(id)).then((e) => e.value)
        .finally(() => this.#messages.delete(id));
      this.#messages.set(id, reading);
    }
    return erasedBy(event, await reading);
  }

  add(event: OutboxEvent): void {
    if (!this.#events.has(event.id)) this.#events.set(event.id, event);
  }
}
