import { keyId } from "./key_id.ts";
import { GET_MANY_MAX } from "./limits.ts";

interface Waiting {
  keys: Deno.KvKey[];
  /** `keys` as text (keyId), in the same order. */
  ids: string[];
  resolve(entries: Deno.KvEntryMaybe<unknown>[]): void;
  reject(error: unknown): void;
}

/** Reads that go in one getMany: its distinct keys by id, and who waits for them. */
interface Group {
  keys: Map<string, Deno.KvKey>;
  members: Waiting[];
}

/**
 * Splits waiting reads into getMany calls of at most GET_MANY_MAX distinct keys each, in one pass:
 * a read whose keys a group already holds joins it (concurrent requests for the same thing read it
 * once), any other goes into the group being filled, or starts the next.
 */
function pack(waiting: Waiting[]): Group[] {
  const groups: Group[] = [];
  const holder = new Map<string, Group>();
  let open: Group | null = null;
  for (const w of waiting) {
    const home = holder.get(w.ids[0]);
    if (home && w.ids.every((id) => home.keys.has(id))) {
      home.members.push(w);
      continue;
    }
    const added = open ? w.ids.filter((id) => !open!.keys.has(id)) : w.ids;
    if (!open || open.keys.size + new Set(added).size > GET_MANY_MAX) {
      open = { keys: new Map(), members: [] };
      groups.push(open);
    }
    w.ids.forEach((id, i) => {
      if (open!.keys.has(id)) return;
      open!.keys.set(id, w.keys[i]);
      if (!holder.has(id)) holder.set(id, open!);
    });
    open.members.push(w);
  }
  return groups;
}

/**
 * An entry handed to more than one reader is the same object for each: frozen, so that a reader
 * that tried to change it (none does: values read are records to answer with or to write anew)
 * would fail at once instead of changing what another reader sees. A copy for each would cost a
 * clone per reader, on the reads that concurrent requests share most.
 */
function share(value: unknown) {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return;
  if (value instanceof Deno.KvU64) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) share(inner);
}

type GetMany = (keys: Deno.KvKey[]) => Promise<Deno.KvEntryMaybe<unknown>[]>;

/**
 * Shares round trips between reads: reads asked for while a wave is in flight wait for it and
 * then go together, each key once, in as few `getMany` calls as fit. On the embedded store every
 * KV op is a round trip through its one worker, so under load this is most of what a read costs;
 * a remote store allows several waves in flight (kv/store/limits.ts). A read is never answered from one
 * that started before it was asked, so it sees every commit that finished before it; each
 * caller's keys stay in one `getMany`, one snapshot. A lone read goes at once.
 */
export class ReadCoalescer {
  #waiting: Waiting[] = [];
  #inFlight = 0;

  /** `getMany` reads the store itself; `waves` may be in flight at once. */
  constructor(private readonly getMany: GetMany, private readonly waves: number) {}

  /** Reads `keys` (at most GET_MANY_MAX) with the reads asked for meanwhile. */
  read(keys: Deno.KvKey[]): Promise<Deno.KvEntryMaybe<unknown>[]> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ keys, ids: keys.map(keyId), resolve, reject });
      this.#pump();
    });
  }

  /** Sends what waits as one wave of reads, while the store allows another wave in flight. */
  #pump() {
    while (this.#waiting.length > 0 && this.#inFlight < this.waves) {
      const batch = this.#waiting;
      this.#waiting = [];
      this.#inFlight++;
      void Promise.all(pack(batch).map((g) => this.#readGroup(g))).finally(() => {
        this.#inFlight--;
        this.#pump();
      });
    }
  }

  async #readGroup({ keys, members }: Group) {
    try {
      const entries = await this.getMany([...keys.values()]);
      if (members.length === 1 && members[0].keys.length === entries.length) {
        return members[0].resolve(entries);
      }
      const byId = new Map<string, Deno.KvEntryMaybe<unknown>>();
      let i = 0;
      for (const id of keys.keys()) byId.set(id, entries[i++]);
      const handed = new Set<string>();
      for (const w of members) {
        w.resolve(w.ids.map((id) => {
          const entry = byId.get(id)!;
          if (handed.has(id)) share(entry.value);
          else handed.add(id);
          return entry;
        }));
      }
    } catch (e) {
      // One caller's bad key must not fail the others: each goes again on its own.
      if (members.length === 1) members[0].reject(e);
      else for (const w of members) this.getMany(w.keys).then(w.resolve, w.reject);
    }
  }
}
