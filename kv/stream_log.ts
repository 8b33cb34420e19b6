/**
 * The team event log in commit order, for the event stream. An event's commit also writes a
 * pending marker and the team's events version; the marker's versionstamp is the commit's, so it
 * knows the event's place in commit order. Pending markers become entries of a log keyed by
 * (versionstamp, first event id) shortly after (by whoever gets there first: the committing
 * process, or a reader that finds one left behind). A reader takes the team's events version
 * first, then the pending markers, then the log: every event committed before that version is
 * then either pending or logged, so nothing is passed over while commits land in any order.
 *
 * A commit writes one marker per team for all its events (up to MARKER_EVENTS each), and the
 * version once: a batch of posts costs the log a few writes, not a few per post. A marker moves
 * into the log whole, as one entry. Entries written before markers were shared hold one event,
 * as `{ type, channel_id }`; readers take both shapes.
 */
import type { DeliveredType } from "../core/types.ts";
import { chunks } from "../core/chunks.ts";
import { idsFrom } from "../core/ids.ts";
import { afterCommit, beforeCommit, commitInBatches, getAll } from "./commit.ts";
import { EVENT_TTL_MS, keys } from "./keys.ts";

/** An event's place in commit order, and what a reader filters on. */
export interface LoggedEvent {
  /** The versionstamp of the commit that wrote the event. */
  versionstamp: string;
  id: string;
  type: DeliveredType;
  channel_id: string;
  /** The id its marker and log entry are keyed by: the first of the events they hold. */
  marker: string;
}

/** A place in a team's log: everything at or before it is behind. */
export interface LogPosition {
  versionstamp: string;
  id: string;
}

/** Whether `a` comes after `b` in commit order (events of one commit by id). */
export const after = (a: LogPosition, b: LogPosition) =>
  a.versionstamp > b.versionstamp || (a.versionstamp === b.versionstamp && a.id > b.id);

const byPosition = (a: LogPosition, b: LogPosition) => after(a, b) ? 1 : after(b, a) ? -1 : 0;

/** An event as a marker or log entry holds it. */
interface Held {
  id: string;
  type: DeliveredType;
  channel_id: string;
}

/** A marker's or log entry's value; the older one-event shape takes its id from the key. */
type Stored = { events: Held[] } | Omit<Held, "id">;

/** Events per marker: a commit's posts fit in one, and a value stays far below 64 KiB. */
const MARKER_EVENTS = 100;

const heldIn = (value: Stored, keyId: string): Held[] =>
  "events" in value ? value.events : [{ id: keyId, ...value }];

const loggedFrom = (value: Stored, keyId: string, versionstamp: string): LoggedEvent[] =>
  heldIn(value, keyId).map((e) => ({ ...e, versionstamp, marker: keyId }));

/**
 * What an event's commit adds for the log: its place in its team's pending marker, written with
 * the team's version when the operation commits. Once the commit lands, readers in this process
 * hear of it and the markers move into the log with the next batch.
 */
export function markPending(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
  teamId: string,
  event: Held,
): void {
  let teams = markings.get(op);
  if (!teams) {
    const marked = teams = new Map<string, Held[]>();
    markings.set(op, marked);
    let markers: Map<string, Held[][]>;
    beforeCommit(op, () => markers = writeMarkers(op, marked));
    afterCommit(op, (versionstamp) => versionstamp && logged(kv, markers, versionstamp));
  }
  const held = { id: event.id, type: event.type, channel_id: event.channel_id };
  const events = teams.get(teamId);
  if (events) events.push(held);
  else teams.set(teamId, [held]);
}

/** Events an operation adds to the log, by team, until it commits. */
const markings = new WeakMap<Deno.AtomicOperation, Map<string, Held[]>>();

/** Writes each team's markers and version into the commit; returns the markers' events. */
function writeMarkers(
  op: Deno.AtomicOperation,
  teams: Map<string, Held[]>,
): Map<string, Held[][]> {
  const markers = new Map<string, Held[][]>();
  for (const [teamId, events] of teams) {
    const sorted = events.toSorted((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const those = chunks(sorted, MARKER_EVENTS);
    for (const chunk of those) {
      op.set(keys.streamPending(teamId, chunk[0].id), { events: chunk }, {
        expireIn: EVENT_TTL_MS,
      });
    }
    op.set(keys.teamEventsVersion(teamId), sorted[0].id);
    markers.set(teamId, those);
  }
  return markers;
}

/** Markers moved per commit: a full one is about 12.5 KB, and a commit may hold 800 KiB. */
const MARKERS_PER_COMMIT = 40;

/**
 * Moves markers into the log; moving one twice writes the same entry. `events` holds each of its
 * markers whole: every event of a marker, or none.
 */
export function logEvents(kv: Deno.Kv, teamId: string, events: LoggedEvent[]): Promise<void> {
  const markers = [...Map.groupBy(events, (e) => e.marker)];
  return commitInBatches(kv, markers, MARKERS_PER_COMMIT, (op, [marker, those]) => {
    const entry = those.map(({ id, type, channel_id }) => ({ id, type, channel_id }));
    op.set(keys.teamStreamAt(teamId, those[0].versionstamp, marker), { events: entry }, {
      expireIn: EVENT_TTL_MS,
    })
      .delete(keys.streamPending(teamId, marker));
  });
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

/** Markers committed here: readers in this process hear of them now; they move into the log. */
function logged(kv: Deno.Kv, markers: Map<string, Held[][]>, versionstamp: string): void {
  const w = writerOf(kv);
  for (const [teamId, those] of markers) {
    const entries = those.flatMap((events) =>
      events.map((e) => ({ ...e, versionstamp, marker: events[0].id }))
    );
    const team = w.queued.get(teamId);
    if (team) team.push(...entries);
    else w.queued.set(teamId, entries);
    for (const listener of w.listeners) listener(teamId);
  }
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
 * events and the markers' events found pending.
 */
export async function readLog(
  kv: Deno.Kv,
  teamId: string,
  from: LogPosition,
  frontier: string,
  limit: number,
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
  kv: Deno.Kv,
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
export async function positionAt(kv: Deno.Kv, teamId: string, ms: number): Promise<LogPosition> {
  const prefix = keys.teamEventsOf(teamId);
  const end = [...prefix, idsFrom(ms)];
  for await (const e of kv.list({ prefix, end }, { reverse: true, limit: 1 })) {
    return { versionstamp: e.versionstamp, id: e.key[2] as string };
  }
  return { versionstamp: "0".repeat(20), id: "" };
}
