/**
 * The team event log in commit order, for the event stream. An event's commit also writes a
 * pending marker and the team's events version; the marker's versionstamp is the commit's, so it
 * knows the event's place in commit order. Pending markers become entries of a log keyed by
 * (versionstamp, event id) shortly after (by whoever gets there first: the committing process,
 * or a reader that finds one left behind). A reader takes the team's events version first, then
 * the pending markers, then the log: every event committed before that version is then either
 * pending or logged, so nothing is passed over while commits land in any order.
 */
import type { DeliveredType } from "../core/types.ts";
import { commitInBatches, getAll } from "./commit.ts";
import { EVENT_TTL_MS, keys } from "./keys.ts";

/** An event's place in commit order, and what a reader filters on. */
export interface LoggedEvent {
  /** The versionstamp of the commit that wrote the event. */
  versionstamp: string;
  id: string;
  type: DeliveredType;
  channel_id: string;
}

/** A place in a team's log: everything at or before it is behind. */
export interface LogPosition {
  versionstamp: string;
  id: string;
}

/** Whether `a` comes after `b` in commit order (events of one commit by id). */
export const after = (a: LogPosition, b: LogPosition) =>
  a.versionstamp > b.versionstamp || (a.versionstamp === b.versionstamp && a.id > b.id);

/** What an event's commit adds for the log: its pending marker, and the team's version. */
export function markPending(
  op: Deno.AtomicOperation,
  teamId: string,
  event: { id: string; type: DeliveredType; channel_id: string },
): void {
  op.set(keys.streamPending(teamId, event.id), { type: event.type, channel_id: event.channel_id }, {
    expireIn: EVENT_TTL_MS,
  })
    .set(keys.teamEventsVersion(teamId), event.id);
}

/** Mutations per commit when moving pending markers into the log (two each; KV allows 1000). */
const INDEX_BATCH = 200;

/** Moves events from pending into the log; moving one twice writes the same entry. */
export function logEvents(kv: Deno.Kv, teamId: string, events: LoggedEvent[]): Promise<void> {
  return commitInBatches(
    kv,
    events,
    INDEX_BATCH,
    (op, e) =>
      op.set(keys.teamStreamAt(teamId, e.versionstamp, e.id), {
        type: e.type,
        channel_id: e.channel_id,
      }, { expireIn: EVENT_TTL_MS })
        .delete(keys.streamPending(teamId, e.id)),
  );
}

/** Who in this process wants to know at once that a team's events were committed here. */
export type TeamListener = (teamId: string) => void;

interface Writer {
  queued: Map<string, LoggedEvent[]>;
  scheduled: boolean;
  /** Settles once every batch scheduled so far is committed (or failed). */
  settled: Promise<void>;
  listeners: Set<TeamListener>;
}

const writers = new WeakMap<Deno.Kv, Writer>();

function writerOf(kv: Deno.Kv): Writer {
  let w = writers.get(kv);
  if (!w) {
    w = { queued: new Map(), scheduled: false, settled: Promise.resolve(), listeners: new Set() };
    writers.set(kv, w);
  }
  return w;
}

/** Listens for events committed in this process (on `kv`); returns how to stop. */
export function onCommittedEvents(kv: Deno.Kv, listener: TeamListener): () => void {
  const w = writerOf(kv);
  w.listeners.add(listener);
  return () => w.listeners.delete(listener);
}

/**
 * An event committed here: readers in this process hear of it now, and its pending marker is
 * moved into the log with the next batch (one commit for all events of a moment).
 */
export function logged(
  kv: Deno.Kv,
  event: { id: string; team_id: string; type: DeliveredType; channel_id: string },
  versionstamp: string,
): void {
  const w = writerOf(kv);
  const entry = { versionstamp, id: event.id, type: event.type, channel_id: event.channel_id };
  const team = w.queued.get(event.team_id);
  if (team) team.push(entry);
  else w.queued.set(event.team_id, [entry]);
  for (const listener of w.listeners) listener(event.team_id);
  if (w.scheduled) return;
  w.scheduled = true;
  const flushed = new Promise<void>((resolve) =>
    setTimeout(() => {
      w.scheduled = false;
      const batch = [...w.queued];
      w.queued.clear();
      // A failure leaves the markers pending, where readers find them and log them.
      Promise.all(batch.map(([teamId, events]) => logEvents(kv, teamId, events).catch(() => {})))
        .then(() => resolve());
    }, LOG_DELAY_MS)
  );
  w.settled = Promise.all([w.settled, flushed]).then(() => {});
}

/** Settles once the events committed here so far are moved into the log: before closing `kv`. */
export const logSettled = (kv: Deno.Kv): Promise<void> => writerOf(kv).settled;

/** How long a process gathers its events before moving them into the log in one commit. */
const LOG_DELAY_MS = 5;

/** The teams' events versions as read now: a changed one means events were committed. */
export async function eventsVersions(
  kv: Deno.Kv,
  teamIds: string[],
): Promise<Map<string, string | null>> {
  const read = await getAll(kv, teamIds.map((t) => keys.teamEventsVersion(t)));
  return new Map(teamIds.map((t, i) => [t, read[i].versionstamp]));
}

/**
 * The team's events after `from`, in commit order, up to `frontier` (the team's events version
 * read before this call: later commits wait for the next read). Pending markers are read before
 * the log, so an event moved from one to the other meanwhile is found at least once. Returns the
 * events and the markers found pending.
 */
export async function readLog(
  kv: Deno.Kv,
  teamId: string,
  from: LogPosition,
  frontier: string,
  limit: number,
): Promise<{ events: LoggedEvent[]; pending: LoggedEvent[]; more: boolean }> {
  const pending: LoggedEvent[] = [];
  for await (
    const e of kv.list<Omit<LoggedEvent, "versionstamp" | "id">>({
      prefix: keys.streamPendingAll(teamId),
    })
  ) {
    pending.push({ versionstamp: e.versionstamp, id: e.key[2] as string, ...e.value });
  }
  const logged: LoggedEvent[] = [];
  const prefix = keys.teamStream(teamId);
  const selector = { prefix, start: [...prefix, from.versionstamp, from.id, ""] };
  let more = false;
  for await (
    const e of kv.list<Omit<LoggedEvent, "versionstamp" | "id">>(selector, {
      limit: limit + 1,
      batchSize: Math.min(limit + 1, 500),
    })
  ) {
    const versionstamp = e.key[2] as string;
    if (versionstamp > frontier) break;
    if (logged.length === limit) {
      more = true;
      break;
    }
    logged.push({ versionstamp, id: e.key[3] as string, ...e.value });
  }
  const seen = new Set(logged.map((e) => e.id));
  const last = logged.at(-1);
  const events = [
    ...logged,
    ...pending.filter((p) =>
      !seen.has(p.id) && p.versionstamp <= frontier && after(p, from) &&
      (!more || !last || !after(p, last))
    ),
  ].sort((a, b) => after(a, b) ? 1 : after(b, a) ? -1 : 0);
  return { events, pending, more };
}

/**
 * Where an event of the team stands in its log, from its entry in the outbox (committed with
 * it, so its versionstamp is the event's). Null when it is not kept, or another team's.
 */
export async function positionOf(
  kv: Deno.Kv,
  teamId: string,
  eventId: string,
): Promise<LogPosition | null> {
  const entry = await kv.get<{ team_id: string }>(keys.event(eventId));
  if (entry.versionstamp === null || entry.value.team_id !== teamId) return null;
  return { versionstamp: entry.versionstamp, id: eventId };
}
