import type { EventType, OutboxEvent } from "../core/types.ts";
import { idTime } from "../core/ids.ts";
import { getAll } from "./commit.ts";
import { keys } from "./keys.ts";

/** What the team index keeps per event: enough to filter without reading the event. */
export interface FeedEntry {
  id: string;
  type: EventType;
  channel_id: string;
}

/**
 * A team's events after `after` (exclusive), in id order, up to `limit` entries, stopping at the
 * first whose id was made after `untilMs`.
 */
export async function listTeamEvents(
  kv: Deno.Kv,
  teamId: string,
  after: string | null,
  untilMs: number,
  limit: number,
): Promise<{ entries: FeedEntry[]; reachedEnd: boolean }> {
  const prefix = keys.teamEvents(teamId);
  const selector = after ? { prefix, start: [...prefix, after, ""] } : { prefix };
  const entries: FeedEntry[] = [];
  for await (
    const e of kv.list<Omit<FeedEntry, "id">>(selector, { limit, batchSize: Math.min(limit, 500) })
  ) {
    const id = e.key[2] as string;
    if (idTime(id) > untilMs) return { entries, reachedEnd: true };
    entries.push({ id, ...e.value });
  }
  return { entries, reachedEnd: entries.length < limit };
}

/** The events themselves, in the order asked; ones expired meanwhile left out. */
export async function readEvents(kv: Deno.Kv, ids: string[]): Promise<OutboxEvent[]> {
  const read = await getAll<OutboxEvent>(kv, ids.map((id) => keys.event(id)));
  return read.flatMap((e) => e.value ? [e.value] : []);
}
