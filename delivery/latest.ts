import type { OutboxEvent } from "../core/types.ts";
import type { Subscription } from "../core/webhook_records.ts";
import { keys } from "../kv/keys.ts";
import { RecentMap } from "../core/recent_map.ts";

/**
 * The newest version of each subscription this process has seen. Every attempt reads the
 * subscription, so it acts on what any process changed last; this only keeps a read that
 * started before this process's own latest commit from going back in time. The recorder
 * commits against the version it wrote last, so its commits don't fail each other's checks;
 * only a change from elsewhere (delete, enable, rotate, another process) makes one retry.
 */
export class LatestSubscriptions {
  readonly #known = new Map<string, Deno.KvEntry<Subscription>>();

  /** The newer of what was just read and what this process wrote last; null when deleted. */
  freshest(read: Deno.KvEntryMaybe<Subscription>): Deno.KvEntry<Subscription> | null {
    const id = read.key[1] as string;
    if (read.versionstamp === null) {
      this.#known.delete(id);
      return null;
    }
    const known = this.#known.get(id);
    if (known && known.versionstamp > read.versionstamp) return known;
    const entry = read as Deno.KvEntry<Subscription>;
    this.#known.set(id, entry);
    return entry;
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

/** Events read or committed lately, by id: events never change, so a copy is as good. */
export class RecentEvents {
  readonly #events: RecentMap<string, OutboxEvent>;
  readonly #reading = new Map<string, Promise<OutboxEvent | null>>();

  constructor(max = 4_096) {
    this.#events = new RecentMap(max);
  }

  get(id: string): OutboxEvent | undefined {
    return this.#events.get(id);
  }

  /** The event from the copy, else read, one read shared by all who ask meanwhile. */
  load(kv: Deno.Kv, id: string): OutboxEvent | Promise<OutboxEvent | null> {
    const known = this.#events.get(id);
    if (known) return known;
    let reading = this.#reading.get(id);
    if (!reading) {
      reading = kv.get<OutboxEvent>(keys.event(id))
        .then(({ value }) => {
          if (value) this.add(value);
          return value;
        })
        .finally(() => this.#reading.delete(id));
      this.#reading.set(id, reading);
    }
    return reading;
  }

  add(event: OutboxEvent): void {
    if (!this.#events.has(event.id)) this.#events.set(event.id, event);
  }
}
