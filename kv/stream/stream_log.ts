/**
 * Reading the team event log in commit order, for the event stream (kv/stream/stream_markers.ts says
 * how commits write it). A reader takes the team's events version first, then the pending
 * markers, then the log: every event committed before that version is then either pending or
 * logged, so nothing is passed over while commits land in any order.
 */
import { idsFrom } from "../../core/ids.ts";
import { getAll } from "../store/commit.ts";
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";
import { type LoggedEvent, loggedFrom, type Stored } from "./stream_markers.ts";

/** A place in a team's log: everything at or before it is behind. */
export interface LogPosition {
  versionstamp: string;
  id: string;
}

/** Whether `a` comes after `b` in commit order (events of one commit by id). */
export const after = (a: LogPosition, b: LogPosition) =>
  a.versionstamp > b.versionstamp || (a.versionstamp === b.versionstamp && a.id > b.id);

const byPosition = (a: LogPosition, b: LogPosition) => after(a, b) ? 1 : after(b, a) ? -1 : 0;

/** The teams' events versions as read now: a changed one means events were committed. */
export async function eventsVersions(
  kv: Store,
  teamIds: string[],
): Promise<Map<string, string | null>> {
  const read = await getAll(kv, teamIds.map((t) => keys.teamEventsVersion(t)));
  return new Map(teamIds.map((t, i) => [t, read[i].versionstamp]));
}

/**
 * The team's events after `from`, in commit order, up to `frontier` (the team's events version
 * read before this call: later commits wait for the next read). Pending markers are read before
 * the log, so an event moved from one to the other meanwhile is found at least once. Returns the
 * events and the markers' events found pending.
 */
export async function readLog(
  kv: Store,
  teamId: string,
  { from, frontier, limit }: { from: LogPosition; frontier: string; limit: number },
): Promise<{ events: LoggedEvent[]; pending: LoggedEvent[]; more: boolean }> {
  const pending: LoggedEvent[] = [];
  for await (const e of kv.list<Stored>({ prefix: keys.streamPendingAll(teamId) })) {
    pending.push(...loggedFrom(e.value, e.key[2] as string, e.versionstamp));
  }
  const logged: LoggedEvent[] = [];
  const prefix = keys.teamStream(teamId);
  // From the first entry of `from`'s commit: an entry is keyed by its first event, and `from`
  // may be any of them.
  const selector = { prefix, start: [...prefix, from.versionstamp] };
  let more = false;
  reading: for await (
    const e of kv.list<Stored>(selector, { batchSize: Math.min(limit + 1, 500) })
  ) {
    const versionstamp = e.key[2] as string;
    if (versionstamp > frontier) break;
    for (const event of loggedFrom(e.value, e.key[3] as string, versionstamp)) {
      if (!after(event, from)) continue;
      if (logged.length === limit) {
        more = true;
        break reading;
      }
      logged.push(event);
    }
  }
  const seen = new Set(logged.map((e) => e.id));
  const last = logged.at(-1);
  const events = [
    ...logged,
    ...pending.filter((p) =>
      !seen.has(p.id) && p.versionstamp <= frontier && after(p, from) &&
      (!more || !last || !after(p, last))
    ),
  ].sort(byPosition);
  return { events, pending, more };
}

/**
 * Where an event of the team stands in its log, from its entry in the outbox (committed with
 * it, so its versionstamp is the event's). Null when it is not kept, or another team's.
 */
export async function positionOf(
  kv: Store,
  teamId: string,
  eventId: string,
): Promise<LogPosition | null> {
  const entry = await kv.get<{ team_id: string }>(keys.event(eventId));
  if (entry.versionstamp === null || entry.value.team_id !== teamId) return null;
  return { versionstamp: entry.versionstamp, id: eventId };
}

/**
 * A position just before the events the team made from `ms` on: that of the last event it made
 * before, from the team's index (committed with the event, so its versionstamp is the event's),
 * or the log's start.
 */
export async function positionAt(kv: Store, teamId: string, ms: number): Promise<LogPosition> {
  const prefix = keys.teamEventsOf(teamId);
  const end = [...prefix, idsFrom(ms)];
  for await (const e of kv.list({ prefix, end }, { reverse: true, limit: 1 })) {
    return { versionstamp: e.versionstamp, id: e.key[2] as string };
  }
  return { versionstamp: "0".repeat(20), id: "" };
}
