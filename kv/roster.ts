import { CacheKind } from "../core/memory.ts";
import { getAll } from "./store/commit.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store/store.ts";

/** What this process last read of a channel's membership, under one members version. */
interface Known {
  versionstamp: string | null;
  members: Map<string, boolean>;
}

const ROSTERS = new CacheKind<Known>("rosters", 10_000);

/**
 * Which of `userIds` belong to the channel, as of `version`: the channel's members-version entry,
 * read with the request's first resource. Every membership change, in any process, rewrites that
 * entry, so what was read under another versionstamp is never used; only users not asked about
 * since cost a read. A write that routes by the answer checks `version` in its commit.
 */
export async function membersAt(
  kv: Store,
  channelId: string,
  version: Deno.KvEntryMaybe<unknown>,
  userIds: Iterable<string>,
): Promise<Set<string>> {
  const rosters = kv.cache(ROSTERS);
  let known = rosters.get(channelId);
  if (!known || known.versionstamp !== version.versionstamp) {
    known = { versionstamp: version.versionstamp, members: new Map() };
    rosters.set(channelId, known);
  }
  const wanted = [...new Set(userIds)];
  const missing = wanted.filter((id) => !known.members.has(id));
  if (missing.length > 0) {
    const read = await getAll(kv, missing.map((id) => keys.member(channelId, id)));
    missing.forEach((id, i) => known.members.set(id, read[i].versionstamp !== null));
  }
  return new Set(wanted.filter((id) => known.members.get(id)));
}
