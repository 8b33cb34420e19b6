import { keyId } from "./keys.ts";
import { GET_MANY_MAX, readWaves } from "./limits.ts";

interface Waiting {
  keys: Deno.KvKey[];
  resolve(entries: Deno.KvEntryMaybe<unknown>[]): void;
  reject(error: unknown): void;
}

/** A fresh copy for each reader after the first, so no reader sees another's changes. */
function copyOf(entry: Deno.KvEntryMaybe<unknown>): Deno.KvEntryMaybe<unknown> {
  const v = entry.value;
  const value = v instanceof Deno.KvU64 ? new Deno.KvU64(v.value) : structuredClone(v);
  return { ...entry, value } as Deno.KvEntryMaybe<unknown>;
}

/** Splits waiting reads into getMany calls of at most GET_MANY_MAX distinct keys each. */
function pack(waiting: Waiting[]): Waiting[][] {
  const groups: { ids: Set<string>; members: Waiting[] }[] = [];
  for (const w of waiting) {
    const ids = w.keys.map(keyId);
    const fits = groups.find((g) =>
      g.ids.size + ids.filter((id) => !g.ids.has(id)).length <= GET_MANY_MAX
    );
    if (fits) {
      for (const id of ids) fits.ids.add(id);
      fits.members.push(w);
    } else groups.push({ ids: new Set(ids), members: [w] });
  }
  return groups.map((g) => g.members);
}

/**
 * Makes `kv.get` and `kv.getMany` share round trips: reads asked for while a wave is in flight
 * wait for it and then go together, each key once, in as few `getMany` calls as fit. On the
 * embedded store every KV op is a round trip through its one worker, so under load this is most
 * of what a read costs; a remote store allows several waves in flight (kv/limits.ts). A read is
 * never answered from one that started before it was asked, so it sees every commit that
 * finished before it; each caller's keys stay in one `getMany`, one snapshot. A lone read goes
 * at once.
 */
export function coalesceReads(kv: Deno.Kv): Deno.Kv {
  const getMany = kv.getMany.bind(kv);
  let waiting: Waiting[] = [];

  async function read(group: Waiting[]) {
    const ids = new Map<string, Deno.KvKey>();
    for (const w of group) for (const k of w.keys) ids.set(keyId(k), k);
    try {
      const entries = await getMany([...ids.values()]);
      const byId = new Map([...ids.keys()].map((id, i) => [id, entries[i]]));
      const handed = new Set<string>();
      for (const w of group) {
        w.resolve(w.keys.map((k) => {
          const id = keyId(k);
          const entry = byId.get(id)!;
          if (!handed.has(id)) {
            handed.add(id);
            return entry;
          }
          return copyOf(entry);
        }));
      }
    } catch (e) {
      // One caller's bad key must not fail the others: each goes again on its own.
      if (group.length === 1) group[0].reject(e);
      else for (const w of group) getMany(w.keys).then(w.resolve, w.reject);
    }
  }

  const waves = readWaves(kv);
  let inFlight = 0;

  /** Sends what waits as one wave of reads, while the store allows another wave in flight. */
  function pump() {
    while (waiting.length > 0 && inFlight < waves) {
      const batch = waiting;
      waiting = [];
      inFlight++;
      void Promise.all(pack(batch).map(read)).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  const coalesced = (keys: Deno.KvKey[]) =>
    new Promise<Deno.KvEntryMaybe<unknown>[]>((resolve, reject) => {
      waiting.push({ keys, resolve, reject });
      pump();
    });

  kv.getMany =
    ((keys: Deno.KvKey[], opts?: { consistency?: Deno.KvConsistencyLevel }) =>
      opts?.consistency === "eventual" || keys.length === 0 || keys.length > GET_MANY_MAX
        ? getMany(keys, opts)
        : coalesced(keys)) as Deno.Kv["getMany"];
  const get = kv.get.bind(kv);
  kv.get =
    ((key: Deno.KvKey, opts?: { consistency?: Deno.KvConsistencyLevel }) =>
      opts?.consistency === "eventual"
        ? get(key, opts)
        : coalesced([key]).then(([entry]) => entry)) as Deno.Kv["get"];
  return kv;
}
