/**
 * How a commit's events get their place in the team's event log (kv/stream/stream_log.ts reads it). An
 * event's commit also writes a pending marker and the team's events version; the marker's
 * versionstamp is the commit's, so it knows the event's place in commit order. Pending markers
 * become entries of a log keyed by (versionstamp, first event id) shortly after, by whoever gets
 * there first: the committing process (`LogMover`), or a reader that finds one left behind.
 *
 * A commit writes one marker per team for all its events (up to MARKER_EVENTS each), and the
 * version once: a batch of posts costs the log a few writes, not a few per post. A marker moves
 * into the log whole, as one entry. Entries written before markers were shared hold one event,
 * as `{ type, channel_id }`; readers take both shapes.
 */
import type { DeliveredType } from "../../core/types.ts";
import { chunks } from "../../core/chunks.ts";
import { commitInBatches, type Planner } from "../store/commit.ts";
import { EVENT_TTL_MS, keys } from "../keys.ts";
import type { PlannedEvent } from "../store/plan.ts";

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

/** An event as a marker or log entry holds it. */
export interface Held {
  id: string;
  type: DeliveredType;
  channel_id: string;
}

/** A marker's or log entry's value; the older one-event shape takes its id from the key. */
export type Stored = { events: Held[] } | Omit<Held, "id">;

/** Events per marker: a commit's posts fit in one, and a value stays far below 64 KiB. */
const MARKER_EVENTS = 100;

const heldIn = (value: Stored, keyId: string): Held[] =>
  "events" in value ? value.events : [{ id: keyId, ...value }];

export const loggedFrom = (value: Stored, keyId: string, versionstamp: string): LoggedEvent[] =>
  heldIn(value, keyId).map((e) => ({ ...e, versionstamp, marker: keyId }));

/** A commit's markers, by team: the events of each, in id order. */
export type Markers = Map<string, Held[][]>;

/** Writes each team's markers and events version into a commit about to be made. */
export function writeMarkers(op: Deno.AtomicOperation, planned: PlannedEvent[]): Markers {
  const teams = Map.groupBy(
    planned.map(({ event }) => event),
    (event) => event.team_id,
  );
  const markers: Markers = new Map();
  for (const [teamId, events] of teams) {
    const sorted = events
      .map(({ id, type, channel_id }) => ({ id, type, channel_id }))
      .sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
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
export function logEvents(kv: Planner, teamId: string, events: LoggedEvent[]): Promise<void> {
  const markers = [...Map.groupBy(events, (e) => e.marker)];
  return commitInBatches(kv, markers, MARKERS_PER_COMMIT, (op, [marker, those]) => {
    const entry = those.map(({ id, type, channel_id }) => ({ id, type, channel_id }));
    op.set(keys.teamStreamAt(teamId, those[0].versionstamp, marker), { events: entry }, {
      expireIn: EVENT_TTL_MS,
    })
      .delete(keys.streamPending(teamId, marker));
  });
}

/**
 * Moves every marker still pending into the log: what an import does once it has written its
 * events, so the log it leaves doesn't depend on when a process writing it was stopped.
 */
export async function logPendingMarkers(
  kv: Planner & { list<T>(selector: Deno.KvListSelector): Deno.KvListIterator<T> },
): Promise<void> {
  const byTeam = new Map<string, LoggedEvent[]>();
  for await (const e of kv.list<Stored>({ prefix: keys.streamPendingAll() })) {
    const teamId = e.key[1] as string;
    const events = loggedFrom(e.value, e.key[2] as string, e.versionstamp);
    byTeam.set(teamId, [...byTeam.get(teamId) ?? [], ...events]);
  }
  for (const [teamId, events] of byTeam) await logEvents(kv, teamId, events);
}

/** How long a process gathers its events before moving them into the log in one commit. */
const LOG_DELAY_MS = 5;

/**
 * Moves the markers this process committed into the log, LOG_DELAY_MS after the first of a batch:
 * one commit for many commits' markers.
 */
export class LogMover {
  readonly #queued = new Map<string, LoggedEvent[]>();
  #scheduled = false;
  #settled: Promise<void> = Promise.resolve();

  constructor(private readonly kv: Planner) {}

  /** Settles once every batch scheduled so far is committed (or failed). */
  get settled(): Promise<void> {
    return this.#settled;
  }

  /** A commit with `markers` landed at `versionstamp`: its events move into the log shortly. */
  landed(markers: Markers, versionstamp: string): void {
    for (const [teamId, those] of markers) {
      const entries = those.flatMap((events) =>
        events.map((e) => ({ ...e, versionstamp, marker: events[0].id }))
      );
      const team = this.#queued.get(teamId);
      if (team) team.push(...entries);
      else this.#queued.set(teamId, entries);
    }
    if (this.#scheduled) return;
    this.#scheduled = true;
    const flushed = new Promise<void>((resolve) =>
      setTimeout(() => {
        this.#scheduled = false;
        const batch = [...this.#queued];
        this.#queued.clear();
        // A failure leaves the markers pending, where readers find them and log them.
        Promise.all(
          batch.map(([teamId, events]) => logEvents(this.kv, teamId, events).catch(() => {})),
        ).then(() => resolve());
      }, LOG_DELAY_MS)
    );
    this.#settled = Promise.all([this.#settled, flushed]).then(() => {});
  }
}
