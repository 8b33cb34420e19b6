/** Scheduled messages as stored (keys in kv/keys.ts): the record and its two indexes. */
import type { ScheduledMessage } from "../core/scheduled_records.ts";
import { keys } from "./keys.ts";
import { commitOrThrow, getAll } from "./store/commit.ts";
import type { Store } from "./store/store.ts";

/** A scheduled message's record's key. */
export const scheduledKey = (m: Pick<ScheduledMessage, "id">) => keys.scheduled(m.id);

/** The keys that go with a scheduled message's record, deleted with it. */
export const scheduledIndexes = (m: ScheduledMessage): Deno.KvKey[] => [
  keys.scheduledDue(m.post_at * 1000, m.id),
  keys.userScheduledOne(m.author_id, m.id),
];

/** Stores a new scheduled message with its indexes, in one commit. */
export async function insertScheduled(kv: Store, m: ScheduledMessage): Promise<void> {
  const op = kv.atomic()
    .check({ key: keys.scheduled(m.id), versionstamp: null })
    .set(keys.scheduled(m.id), m);
  for (const key of scheduledIndexes(m)) op.set(key, null);
  await commitOrThrow(op, "schedule message");
}

export const getScheduled = (kv: Store, id: string) => kv.get<ScheduledMessage>(keys.scheduled(id));

/** Deletes a scheduled message read as `entry`; false when it changed or went meanwhile. */
export async function deleteScheduled(
  kv: Store,
  entry: Deno.KvEntry<ScheduledMessage>,
): Promise<boolean> {
  const op = kv.atomic().check(entry).delete(entry.key);
  for (const key of scheduledIndexes(entry.value)) op.delete(key);
  return (await op.commit()).ok;
}

/** The ids of the scheduled messages due by `nowMs`, soonest first, at most `limit`. */
export async function dueScheduledIds(kv: Store, nowMs: number, limit: number): Promise<string[]> {
  const out: string[] = [];
  const selector = { prefix: keys.scheduledDueAll(), end: keys.scheduledDue(nowMs + 1, "") };
  for await (const e of kv.list<null>(selector, { limit })) out.push(e.key[2] as string);
  return out;
}

/** When the soonest scheduled message is due (ms), or null with none. */
export async function nextDueMs(kv: Store): Promise<number | null> {
  for await (const e of kv.list<null>({ prefix: keys.scheduledDueAll() }, { limit: 1 })) {
    return e.key[1] as number;
  }
  return null;
}

/** Records by id, as read (absent ones dropped). */
export async function scheduledEntries(
  kv: Store,
  ids: string[],
): Promise<Deno.KvEntry<ScheduledMessage>[]> {
  const entries = await getAll<ScheduledMessage>(kv, ids.map(keys.scheduled));
  return entries.filter((e): e is Deno.KvEntry<ScheduledMessage> => e.versionstamp !== null);
}

/** A user's scheduled messages, as read. */
export async function userScheduled(
  kv: Store,
  userId: string,
): Promise<Deno.KvEntry<ScheduledMessage>[]> {
  const ids: string[] = [];
  for await (const e of kv.list<null>({ prefix: keys.userScheduled(userId) })) {
    ids.push(e.key[2] as string);
  }
  return await scheduledEntries(kv, ids);
}

/**
 * Takes the turn to post what is due until `until` (ms), unless another process holds it: one
 * process posts at a time, so two don't race for the same messages (the post's commit would let
 * only one win anyway).
 */
export async function takeScheduledTurn(
  kv: Store,
  { owner, until, now }: { owner: string; until: number; now: number },
): Promise<boolean> {
  const entry = await kv.get<{ owner: string; until: number }>(keys.scheduledTurn());
  if (entry.value && entry.value.owner !== owner && entry.value.until > now) return false;
  const res = await kv.atomic().check(entry).set(keys.scheduledTurn(), { owner, until }).commit();
  return res.ok;
}
