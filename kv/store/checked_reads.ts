import { RecentMap } from "../../core/recent_map.ts";
import { keyId } from "./key_id.ts";

type GetMany = (keys: Deno.KvKey[]) => Promise<Deno.KvEntryMaybe<unknown>[]>;

/**
 * Entries as this process last read them for a write that checks each one in its commit. Such a
 * write may start from these instead of reading: if any of them changed since, here or in
 * another process, its commit fails and it reads afresh. So a stale entry costs one lost commit
 * and never decides anything. Nothing else may answer from here: a read that commits nothing
 * has no check to catch a stale entry.
 */
export class CheckedReads {
  readonly #memory = new RecentMap<string, Deno.KvEntryMaybe<unknown>>(20_000);

  constructor(private readonly getMany: GetMany) {}

  /**
   * Reads `keys` for a write that will check every entry at commit; with `reuse`, answers from
   * the entries last read when it has them all. Values are shared between writes: never change
   * one.
   */
  async read(keys: Deno.KvKey[], reuse: boolean): Promise<Deno.KvEntryMaybe<unknown>[]> {
    const ids = keys.map(keyId);
    if (reuse) {
      const known = ids.map((id) => this.#memory.get(id));
      if (known.every((e) => e !== undefined)) return known as Deno.KvEntryMaybe<unknown>[];
    }
    const entries = await this.getMany(keys);
    entries.forEach((e, i) => this.#memory.set(ids[i], e));
    return entries;
  }
}
