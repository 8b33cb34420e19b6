/**
 * The live event stream (GET /events/stream): the envelopes webhooks deliver, in commit order,
 * to every open stream of a reader that may see them. One hub per process serves all its streams:
 * it learns of events committed here at once, and of those committed elsewhere by reading each
 * busy team's events version every POLL_MS, once for all streams. Every event is sent with its
 * place in the team's log as the SSE id, so a stream resumed from it misses and repeats nothing.
 */
import type { Ctx } from "./context.ts";
import { ApiError, invalid, unauthenticated } from "../core/errors.ts";
import { idTime, newId } from "../core/ids.ts";
import { KeyedLock } from "../core/keyed_lock.ts";
import { errorFields, log } from "../core/log.ts";
import type { OutboxEvent, Subject } from "../core/types.ts";
import { readEvents } from "../kv/event_feed.ts";
import {
  after,
  eventsVersions,
  type LogPosition,
  positionAt,
  positionOf,
  readLog,
} from "../kv/stream_log.ts";
import { logEvents, type LoggedEvent } from "../kv/stream_markers.ts";
import type { Committed } from "../kv/plan.ts";
import {
  dropStreams,
  registerStream,
  renewStreams,
  type StreamRef,
} from "../kv/stream_registry.ts";
import { tokensByHash, tokensVersion } from "../kv/tokens.ts";
import { retrying } from "../core/retry.ts";
import { decodeCursor, encodeCursor } from "./stream_cursor.ts";
import { verifySubject } from "./authenticate.ts";
import { isTokenLive } from "./token_format.ts";
import { visibleChannelIds } from "./channel_access.ts";
import { selectFor, type StreamFilter } from "./stream_audience.ts";
import { isFarBehind, visiblePage } from "./stream_catch_up.ts";
import { envelopeOf } from "./views.ts";
import { asTheyAreNow } from "./erasure.ts";
import { FEED_LAG_MS } from "./event_feed.ts";
import { requireWithinHorizon } from "./horizon.ts";

/** Open streams one token may hold, across all instances. */
export const MAX_STREAMS_PER_TOKEN = 10;
/** How often events committed by other processes are looked for, while any stream is open. */
const POLL_MS = 20;
/** A comment line this often keeps proxies from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;
/** A registration lasts this long unless renewed (every heartbeat). */
const REGISTRATION_MS = 3 * HEARTBEAT_MS;
/** What a stream's reader may leave unread before it is closed (it resumes where it was). */
const MAX_UNREAD_BYTES = 1 << 20;
/** Log entries read at a time, catching up or live. */
const PAGE = 500;
/** A pending marker this old was left by a process that died before logging it. */
const STALE_PENDING_MS = 2_000;
/** How long a client waits before coming back after the service closed its stream. */
const RETRY_MS = 1_000;

const enc = new TextEncoder();

/** Everything at or before the team's current events version is behind. */
const frontierPosition = (versionstamp: string | null): LogPosition => ({
  versionstamp: versionstamp ?? "",
  id: "~",
});

interface OpenStream {
  id: string;
  team: TeamState;
  subject: Subject;
  /** The token the stream was opened with, read again when any token is revoked. */
  tokenHash: string;
  filter: StreamFilter;
  /** The last event sent (or the position it started from). */
  cursor: LogPosition;
  /** Whether it is not behind its team (rounds send to it); false while it catches up. */
  live: boolean;
  /** Whether it catches up from its reader's indexes: it started far behind, and still is. */
  fromIndexes: boolean;
  /** When its token expires (ms; Infinity: never): the stream ends then, as at a revocation. */
  expiresAt: number;
  /** Settles when the server is done with the response (its connection closed, or it ended). */
  done?: Promise<void>;
  controller: ReadableStreamDefaultController<Uint8Array>;
  closed: boolean;
}

interface TeamState {
  streams: Set<OpenStream>;
  /** Where the last round ended: live streams are at or past it. */
  position: LogPosition;
  /** The events version the last round read up to. */
  version: string | null;
  round: Promise<void> | null;
  again: boolean;
}

/** Why a stream is cut off (see StreamHub #cutOff): the server logs it as what it is. */
export class ReaderTooSlow extends Error {
  constructor() {
    super("the reader left more than 1 MiB unread");
  }
}

/** One process's event streams. */
export class StreamHub {
  readonly #teams = new Map<string, TeamState>();
  #pollTimer: ReturnType<typeof setTimeout> | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #tokens: string | null | undefined;
  /** Streams cut off whose connections the server still holds (see #cutOff). */
  readonly #lingering = new Set<OpenStream>();
  /** The earliest expiry of an open stream's token (ms). */
  #nextExpiry = Infinity;
  #closing = false;
  readonly #registering = new KeyedLock();
  readonly #toDrop: StreamRef[] = [];
  #dropped: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: Ctx) {}

  /** Events were committed in this process: the streams of their teams read them now. */
  heard({ teams }: Committed): void {
    if (this.#closing) return;
    for (const teamId of teams) this.#wake(teamId);
  }

  /** Streams open in this process. */
  get size(): number {
    let n = 0;
    for (const t of this.#teams.values()) n += t.streams.size;
    return n;
  }

  /** Every stream open in this process, as a list (ending one changes the teams' sets). */
  #allStreams(): OpenStream[] {
    return [...this.#teams.values()].flatMap((t) => [...t.streams]);
  }

  /**
   * Opens a stream for `subject` from `from` (null: from now), or refuses with 429 when its
   * token already holds MAX_STREAMS_PER_TOKEN. The stream ends when the client goes.
   */
  async open(
    subject: Subject,
    filter: StreamFilter,
    from: LogPosition | null,
    done?: Promise<void>,
  ): Promise<ReadableStream<Uint8Array>> {
    if (this.#closing) throw new ApiError(503, "The service is stopping; connect again.");
    const expiresAt = await this.#watchToken(subject);
    const id = newId();
    // One at a time per token here: a client opening its streams at once would only conflict.
    const registered = await this.#registering.run(
      subject.token_id,
      () =>
        retrying("open event stream", () =>
          registerStream(
            this.ctx.kv,
            subject.token_id,
            id,
            Date.now() + REGISTRATION_MS,
            MAX_STREAMS_PER_TOKEN,
          )),
    );
    if (!registered) {
      throw new ApiError(
        429,
        `A token may hold at most ${MAX_STREAMS_PER_TOKEN} open event streams; close one first.`,
        undefined,
        { "Retry-After": String(HEARTBEAT_MS / 1000) },
      );
    }
    const team = await this.#team(subject.team_id);
    let stream!: OpenStream;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        stream = {
          id,
          team,
          subject,
          tokenHash: subject.token_hash ?? "",
          filter,
          cursor: from ?? team.position,
          // Live only between rounds: one under way may have taken its streams already.
          live: !team.round && (!from || !after(team.position, from)),
          fromIndexes: from !== null && isFarBehind(from),
          expiresAt,
          done,
          controller,
          closed: false,
        };
        team.streams.add(stream);
        this.#nextExpiry = Math.min(this.#nextExpiry, expiresAt);
        controller.enqueue(enc.encode(`retry: ${RETRY_MS}\n: connected\n\n`));
        this.#startTimers();
      },
      // A pull that sends nothing is not called again until something is enqueued: read on
      // until this one sends something (the reader's demand brings the next) or it is live.
      pull: async () => {
        while (!stream.live && !stream.closed && !await this.#catchUp(stream));
      },
      cancel: () => this.#forget(stream),
    }, new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }));
  }

  /** Closes every stream, telling clients to come back (to another instance) shortly. */
  async closeAll(): Promise<void> {
    this.#closing = true;
    clearTimeout(this.#pollTimer);
    clearInterval(this.#heartbeat);
    const all = this.#allStreams();
    // Their registrations go in a few commits, not one each: the process may have little time.
    await Promise.all(
      all.map((s) => this.#end(s, `retry: ${RETRY_MS}\n: the service is stopping\n\n`)),
    );
    // Also those of streams whose clients left just before.
    await this.#dropped;
    await this.ctx.kv.settled();
  }

  /**
   * Reads the tokens version, then the token: a revocation after this read changes the version,
   * which the next poll sees (a baseline first taken by a later poll could miss it).
   */
  async #watchToken(subject: Subject): Promise<number> {
    const version = await tokensVersion(this.ctx.kv);
    const [entry] = await tokensByHash(this.ctx.kv, [subject.token_hash ?? ""]);
    if (!isTokenLive(entry.value, Date.now())) {
      throw unauthenticated("The token is invalid, revoked or expired.");
    }
    this.#tokens ??= version;
    return entry.value?.expires_at ? Date.parse(entry.value.expires_at) : Infinity;
  }

  async #team(teamId: string): Promise<TeamState> {
    let team = this.#teams.get(teamId);
    if (team) return team;
    const version = (await eventsVersions(this.ctx.kv, [teamId])).get(teamId) ?? null;
    team = this.#teams.get(teamId);
    if (team) return team;
    team = {
      streams: new Set(),
      position: frontierPosition(version),
      version,
      round: null,
      again: false,
    };
    this.#teams.set(teamId, team);
    return team;
  }

  #registration = (s: OpenStream) => ({ tokenId: s.subject.token_id, streamId: s.id });

  async #forget(stream: OpenStream) {
    if (this.#detach(stream)) await this.#drop([this.#registration(stream)]);
  }

  /** Stops sending to a stream; false when it was stopped already. */
  #detach(stream: OpenStream): boolean {
    stream.closed = true;
    const { team } = stream;
    if (!team.streams.delete(stream)) return false;
    if (team.streams.size === 0 && this.#teams.get(stream.subject.team_id) === team) {
      this.#teams.delete(stream.subject.team_id);
    }
    if (this.size === 0 && this.#lingering.size === 0) this.#stopTimers();
    return true;
  }

  /**
   * Drops registrations, gathering those of streams that end while a drop is under way into the
   * next one (many clients leaving at once cost a few commits, not one each). Settles once they
   * are dropped, or failed to be (a registration left behind runs out by itself).
   */
  #drop(refs: StreamRef[]): Promise<void> {
    const first = this.#toDrop.length === 0;
    this.#toDrop.push(...refs);
    if (!first) return this.#dropped;
    this.#dropped = this.#dropped.then(() =>
      dropStreams(this.ctx.kv, this.#toDrop.splice(0))
        .catch((e) => log.error("stream: dropping registrations failed", errorFields(e)))
    );
    return this.#dropped;
  }

  /** Ends a stream from this side: what is queued still reaches the client, then the end. */
  #end(stream: OpenStream, last?: string): Promise<void> {
    if (!stream.closed) {
      try {
        if (last) stream.controller.enqueue(enc.encode(last));
        stream.controller.close();
      } catch {
        // The client went first.
      }
    }
    return this.#forget(stream);
  }

  /**
   * Ends a stream whose reader left too much unread: an error, not a close, so that the bytes
   * queued for it are dropped, where a close would keep them for a reader that may never read
   * them. The reader resumes from its last id.
   */
  #cutOff(stream: OpenStream) {
    if (stream.closed) return;
    stream.controller.error(new ReaderTooSlow());
    if (!this.#detach(stream)) return;
    if (!stream.done) {
      void this.#drop([this.#registration(stream)]);
      return;
    }
    // The server may hold the connection while its last bytes wait for the reader: it counts
    // against the token's streams until it is gone, so a token never holds more than its cap.
    this.#lingering.add(stream);
    this.#startTimers();
    void stream.done.finally(() => {
      this.#lingering.delete(stream);
      if (this.size === 0 && this.#lingering.size === 0) this.#stopTimers();
      return this.#drop([this.#registration(stream)]);
    });
  }

  /** Sends bytes; a reader that leaves too much unread is closed (it resumes from its last id). */
  #send(stream: OpenStream, bytes: Uint8Array) {
    if (stream.closed) return;
    try {
      stream.controller.enqueue(bytes);
    } catch {
      void this.#forget(stream);
      return;
    }
    if ((stream.controller.desiredSize ?? 0) < -MAX_UNREAD_BYTES) this.#cutOff(stream);
  }

  #startTimers() {
    this.#heartbeat ??= setInterval(() => void this.#beat(), HEARTBEAT_MS);
    this.#pollTimer ??= setTimeout(() => void this.#poll(), POLL_MS);
  }

  #stopTimers() {
    clearTimeout(this.#pollTimer);
    clearInterval(this.#heartbeat);
    this.#pollTimer = undefined;
    this.#heartbeat = undefined;
  }

  async #beat() {
    const streams = this.#allStreams();
    const ping = enc.encode(": ping\n\n");
    for (const s of streams) this.#send(s, ping);
    await renewStreams(
      this.ctx.kv,
      [...streams, ...this.#lingering].map(this.#registration),
      Date.now() + REGISTRATION_MS,
    ).catch((e) => log.error("stream: renewing registrations failed", errorFields(e)));
  }

  /** One read of every busy team's events version, and of the tokens version. */
  async #poll() {
    if (Date.now() >= this.#nextExpiry) this.#endExpired();
    try {
      const teams = [...this.#teams.keys()];
      const [versions, tokens] = await Promise.all([
        eventsVersions(this.ctx.kv, teams),
        tokensVersion(this.ctx.kv),
      ]);
      if (this.#tokens !== undefined && tokens !== this.#tokens) await this.#checkTokens();
      this.#tokens = tokens;
      for (const [teamId, version] of versions) {
        const team = this.#teams.get(teamId);
        if (team && version !== team.version) this.#wake(teamId);
      }
    } catch (e) {
      log.error("stream: polling for events failed", errorFields(e));
    } finally {
      if (this.#pollTimer !== undefined && this.size > 0 && !this.#closing) {
        this.#pollTimer = setTimeout(() => void this.#poll(), POLL_MS);
      }
    }
  }

  /**
   * Ends the streams whose token has expired, from memory: an expiry changes nothing in the
   * store, so no read would tell. Every poll of every instance looks at the next one due.
   */
  #endExpired() {
    const now = Date.now();
    let next = Infinity;
    for (const s of this.#allStreams()) {
      if (s.expiresAt <= now) void this.#end(s, ": the token has expired\n\n");
      else next = Math.min(next, s.expiresAt);
    }
    this.#nextExpiry = next;
  }

  /** A token was revoked or rotated somewhere: streams of tokens no longer valid end now. */
  async #checkTokens() {
    const streams = this.#allStreams();
    const hashes = [...new Set(streams.map((s) => s.tokenHash))];
    const read = await tokensByHash(this.ctx.kv, hashes);
    const now = Date.now();
    const valid = new Set(hashes.filter((_, i) => isTokenLive(read[i].value, now)));
    for (const s of streams) {
      if (!valid.has(s.tokenHash)) void this.#end(s, ": the token is no longer valid\n\n");
    }
  }

  /** Runs a round for the team now, or once more after the one under way. */
  #wake(teamId: string) {
    const team = this.#teams.get(teamId);
    if (!team) return;
    if (team.round) {
      team.again = true;
      return;
    }
    team.round = (async () => {
      do {
        team.again = false;
        await this.#round(teamId, team);
      } while (team.again && team.streams.size > 0);
    })().catch((e) => log.error("stream: a round failed", errorFields(e)))
      .finally(() => team.round = null);
  }

  /** Sends live streams what the team committed since the last round. */
  async #round(teamId: string, team: TeamState) {
    const version = (await eventsVersions(this.ctx.kv, [teamId])).get(teamId) ?? null;
    if (version === null) return;
    for (;;) {
      const page = await readLog(this.ctx.kv, teamId, team.position, version, PAGE);
      this.#logStale(teamId, page.pending);
      const live = [...team.streams].filter((s) => s.live && !s.closed);
      await this.#deliver(page.events, live);
      if (page.events.length > 0) team.position = page.events.at(-1)!;
      if (!page.more) break;
    }
    team.version = version;
    if (!after(team.position, frontierPosition(version))) team.position = frontierPosition(version);
  }

  /**
   * Reads on for a stream that is behind its team, a page each time its reader wants more: far
   * behind, from what its reader may see (domain/stream_catch_up.ts), then from the team's log.
   * Once it has everything up to the version it read, it is live if no round went past that
   * since (and none is under way).
   * Returns whether it sent the stream anything.
   */
  async #catchUp(stream: OpenStream): Promise<boolean> {
    if (stream.fromIndexes) {
      const page = await visiblePage(this.ctx, stream.subject, stream.filter, stream.cursor, PAGE);
      if (page) {
        const sent = await this.#deliver(page.events, [stream]) > 0;
        if (after(page.frontier, stream.cursor)) stream.cursor = page.frontier;
        return sent;
      }
      stream.fromIndexes = false;
    }
    const teamId = stream.subject.team_id;
    const version = (await eventsVersions(this.ctx.kv, [teamId])).get(teamId) ?? null;
    const page = await readLog(this.ctx.kv, teamId, stream.cursor, version ?? "", PAGE);
    const sent = await this.#deliver(page.events, [stream]) > 0;
    if (page.more) return sent;
    const read = frontierPosition(version);
    if (after(read, stream.cursor)) stream.cursor = read;
    // A round under way took its live streams before this one could join, and will move the
    // team past this cursor: join between rounds, or read the gap first.
    const { team } = stream;
    if (team.round) await team.round;
    if (!team.round && !after(team.position, stream.cursor)) stream.live = true;
    return sent;
  }

  /**
   * Sends each stream the events it may see and asked for, after its cursor, in order. Returns
   * how many streams it sent something.
   */
  async #deliver(events: LoggedEvent[], streams: OpenStream[]): Promise<number> {
    if (events.length === 0 || streams.length === 0) return 0;
    const picks = await selectFor(this.ctx, events, streams);
    const picked = new Set<number>();
    for (const indexes of picks) for (const i of indexes) picked.add(i);
    if (picked.size === 0) {
      this.#passOver(events.at(-1)!, streams);
      return 0;
    }
    const wanted = [...picked].sort((a, b) => a - b);
    const bodies = new Map<string, OutboxEvent>();
    const read = await readEvents(this.ctx.kv, wanted.map((i) => events[i].id));
    for (const e of await asTheyAreNow(this.ctx.kv, read)) {
      bodies.set(e.id, e);
    }
    const frames = events.map((e) => {
      const body = bodies.get(e.id);
      return body
        ? `id: ${encodeCursor(e)}\nevent: ${e.type}\ndata: ${JSON.stringify(envelopeOf(body))}\n\n`
        : null;
    });
    const joined = new Map<string, Uint8Array>();
    let sent = 0;
    streams.forEach((stream, n) => {
      if (picks[n].length === 0) return;
      const mine = picks[n].filter((i) => frames[i] && after(events[i], stream.cursor));
      if (mine.length > 0) {
        const key = mine.join(",");
        let bytes = joined.get(key);
        if (!bytes) joined.set(key, bytes = enc.encode(mine.map((i) => frames[i]).join("")));
        this.#send(stream, bytes);
        sent++;
      }
    });
    this.#passOver(events.at(-1)!, streams);
    return sent;
  }

  /** Moves each stream's cursor past `last`, sent or not: a resumed stream starts after it. */
  #passOver(last: LoggedEvent, streams: OpenStream[]) {
    for (const stream of streams) if (after(last, stream.cursor)) stream.cursor = last;
  }

  /**
   * Logs pending markers a process that died left behind, so every reader finds them there. A
   * marker's age is its first event's, so its events go together.
   */
  #logStale(teamId: string, pending: LoggedEvent[]) {
    const stale = pending.filter((p) => Date.now() - idTime(p.marker) > STALE_PENDING_MS);
    if (stale.length > 0) logEvents(this.ctx.kv, teamId, stale).catch(() => {});
  }
}

/** What a client asks a stream for, shape-checked at the edge. */
export interface StreamQuery {
  types: StreamFilter["types"];
  channelIds: string[] | null;
  /** A stream's SSE id or an event id to resume after (Last-Event-ID, or `after`); null: now. */
  after: string | null;
  /** Settles when the server is done with the response: what a cut-off stream waits for. */
  done?: Promise<void>;
}

/**
 * Opens an event stream for a token's subject (GET /events/stream): `channel_ids` must name
 * channels it can see, refused exactly like unknown ones (422, as for a subscription); a resume
 * position is resolved by `resumeFrom`.
 */
export async function openEventStream(
  ctx: Ctx,
  hub: StreamHub,
  subject: Subject,
  query: StreamQuery,
): Promise<ReadableStream<Uint8Array>> {
  await verifySubject(ctx, subject);
  if (query.channelIds) {
    const visible = await visibleChannelIds(ctx, subject, query.channelIds);
    if (query.channelIds.some((id) => !visible.has(id))) {
      throw invalid("channel_ids", "Every channel id must name a channel of this workspace.");
    }
  }
  const from = query.after === null ? null : await resumeFrom(ctx, subject, query.after);
  const filter = { types: query.types, channelIds: query.channelIds };
  return await hub.open(subject, filter, from, query.done);
}

/**
 * Where a stream resumes: after an SSE id's place in the log (where its event still stands
 * there); after the place of an event the subject sees; and for any other event id (hidden, another team's, never made), alike,
 * from a little before the time its id carries (FEED_LAG_MS: commits land in about id order),
 * so nothing after it is skipped, and nothing tells those apart. Past the horizon, a 410.
 */
async function resumeFrom(ctx: Ctx, subject: Subject, text: string): Promise<LogPosition> {
  const asked = decodeCursor(text);
  if (!asked) {
    throw invalid("after", "The after cursor must be an event stream id or an event id.");
  }
  const id = "eventId" in asked ? asked.eventId : asked.id;
  requireWithinHorizon(id);
  const exact = await positionOf(ctx.kv, subject.team_id, id);
  // An SSE id names its event's place in this store: one from a store this one was moved or
  // restored from does not, and goes by its event as any other id.
  if (!("eventId" in asked) && exact?.versionstamp === asked.versionstamp) return asked;
  const event = exact && (await readEvents(ctx.kv, [id]))[0];
  if (event && (await visibleChannelIds(ctx, subject, [event.channel_id])).size > 0) return exact!;
  return await positionAt(ctx.kv, subject.team_id, idTime(id) - FEED_LAG_MS);
}
