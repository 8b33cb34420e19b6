/**
 * One process's event streams (GET /events/stream): the envelopes webhooks deliver, in commit
 * order, to every open stream of a reader that may see them. The hub learns of events committed
 * here at once (the store's bus, `heard`), and of those committed elsewhere by reading each busy
 * team's events version every POLL_MS, once for all streams. Every event goes with its place in
 * the team's log as its id, so a stream resumed from it misses and repeats nothing. The hub hands
 * each stream events (domain/stream/sink.ts); the HTTP edge frames them.
 */
import type { Ctx } from "../context.ts";
import { ApiError } from "../../core/errors.ts";
import { newId } from "../../core/ids.ts";
import { errorFields, log } from "../../core/log.ts";
import type { Committed } from "../../kv/store/plan.ts";
import { after, eventsVersions } from "../../kv/stream/stream_log.ts";
import type { StreamRef } from "../../kv/stream/stream_registry.ts";
import { isFarBehind } from "./catch_up.ts";
import { catchUp, round } from "./rounds.ts";
import {
  frontierPosition,
  type OpenedStream,
  type OpenStream,
  type StreamRequest,
  type TeamState,
} from "./state.ts";
import { HEARTBEAT_MS, StreamRegistrations } from "./registrations.ts";
import type { StreamBatch } from "./sink.ts";
import { noticesVersions } from "../../kv/ephemeral.ts";
import { sendNotices } from "./notices.ts";
import { TokenWatch } from "./tokens.ts";

/** How often events committed by other processes are looked for, while any stream is open. */
const POLL_MS = 20;
/** What a stream's reader may leave unread before it is cut off (it resumes where it was). */
const MAX_UNREAD_BYTES = 1 << 20;
/** How long a client waits before coming back after the service closed its stream. */
const RETRY_MS = 1_000;

/** One process's event streams. */
export class StreamHub {
  readonly #teams = new Map<string, TeamState>();
  readonly #registrations: StreamRegistrations;
  readonly #tokens: TokenWatch;
  #pollTimer: ReturnType<typeof setTimeout> | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #closing = false;

  constructor(private readonly ctx: Ctx) {
    this.#registrations = new StreamRegistrations(ctx);
    this.#tokens = new TokenWatch(ctx);
  }

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
   * Lets a stream open for `subject` from `from` (null: from now), or refuses: 401 for a token no
   * longer live, 429 when its token already holds its cap, 503 while the service stops.
   */
  async open({ subject, filter, from, done }: StreamRequest): Promise<OpenedStream> {
    if (this.#closing) throw new ApiError(503, "The service is stopping; connect again.");
    const expiresAt = await this.#tokens.start(subject);
    const id = newId();
    await this.#registrations.register({
      tokenId: subject.token_id,
      userId: subject.user_id,
      streamId: id,
    });
    const team = await this.#team(subject.team_id);
    let stream: OpenStream | undefined;
    return {
      run: (sink) => {
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
          sink,
          closed: false,
          ended: Promise.withResolvers(),
        };
        return this.#run(stream);
      },
      gone: () => stream && void this.#forget(stream),
    };
  }

  async #run(stream: OpenStream): Promise<void> {
    stream.team.streams.add(stream);
    this.#startTimers();
    void stream.sink.note("connected", RETRY_MS);
    // Behind: a page at a time, each once the reader has taken the last.
    try {
      while (!stream.live && !stream.closed) await catchUp(this.ctx, stream, this.#sender);
    } catch (e) {
      log.error("stream: catching up failed", errorFields(e));
      void this.#end(stream);
    }
    await stream.ended.promise;
  }

  /** Closes every stream, telling clients to come back (to another instance) shortly. */
  async closeAll(): Promise<void> {
    this.#closing = true;
    clearTimeout(this.#pollTimer);
    clearInterval(this.#heartbeat);
    const all = this.#allStreams();
    // Their registrations go in a few commits, not one each: the process may have little time.
    await Promise.all(all.map((s) => this.#end(s, "the service is stopping", RETRY_MS)));
    // Also those of streams whose clients left just before.
    await this.#registrations.settled;
    await this.ctx.kv.settled();
  }

  async #team(teamId: string): Promise<TeamState> {
    let team = this.#teams.get(teamId);
    if (team) return team;
    const [versions, notices] = await Promise.all([
      eventsVersions(this.ctx.kv, [teamId]),
      noticesVersions(this.ctx.kv, [teamId]),
    ]);
    team = this.#teams.get(teamId);
    if (team) return team;
    const version = versions.get(teamId) ?? null;
    team = {
      streams: new Set(),
      position: frontierPosition(version),
      version,
      round: null,
      again: false,
      noticesSeen: notices.get(teamId) ?? null,
    };
    this.#teams.set(teamId, team);
    return team;
  }

  #registration = (s: OpenStream): StreamRef => ({
    tokenId: s.subject.token_id,
    userId: s.subject.user_id,
    streamId: s.id,
  });

  async #forget(stream: OpenStream) {
    if (this.#detach(stream)) await this.#registrations.drop([this.#registration(stream)]);
  }

  /** Stops sending to a stream; false when it was stopped already. */
  #detach(stream: OpenStream): boolean {
    stream.closed = true;
    stream.ended.resolve();
    const { team } = stream;
    if (!team.streams.delete(stream)) return false;
    if (team.streams.size === 0 && this.#teams.get(stream.subject.team_id) === team) {
      this.#teams.delete(stream.subject.team_id);
    }
    this.#stopTimersIfIdle();
    return true;
  }

  /** Ends a stream from this side: what is queued still reaches the client, then the end. */
  #end(stream: OpenStream, reason?: string, retryMs?: number): Promise<void> {
    if (!stream.closed) {
      if (reason) void stream.sink.note(reason, retryMs);
      void stream.sink.end();
    }
    return this.#forget(stream);
  }

  /**
   * Ends a stream whose reader left too much unread, dropping what is queued for it, where an
   * end would keep it for a reader that may never read it. The reader resumes from its last id.
   */
  #cutOff(stream: OpenStream) {
    if (stream.closed) return;
    log.info("stream: a reader too slow was cut off");
    const detached = this.#detach(stream);
    // After detaching: the edge says the reader is gone as the stream aborts.
    stream.sink.cutOff();
    if (!detached) return;
    if (!stream.done) {
      void this.#registrations.drop([this.#registration(stream)]);
      return;
    }
    // The server may hold the connection while its last bytes wait for the reader: it counts
    // against the token's streams until it is gone, so a token never holds more than its cap.
    this.#registrations.hold(
      this.#registration(stream),
      stream.done,
      () => this.#stopTimersIfIdle(),
    );
    this.#startTimers();
  }

  /** Sends a batch; a reader that leaves too much unread is cut off (it resumes from its last id). */
  #sender = (stream: OpenStream, batch: StreamBatch): Promise<void> => {
    if (stream.closed) return Promise.resolve();
    const taken = stream.sink.send(batch);
    this.#cutOffIfBehind(stream);
    return taken;
  };

  #cutOffIfBehind(stream: OpenStream) {
    if (stream.sink.unread > MAX_UNREAD_BYTES) this.#cutOff(stream);
  }

  #startTimers() {
    this.#heartbeat ??= setInterval(() => void this.#beat(), HEARTBEAT_MS);
    this.#pollTimer ??= setTimeout(() => void this.#poll(), POLL_MS);
  }

  #stopTimersIfIdle() {
    if (this.size > 0 || this.#registrations.held > 0) return;
    clearTimeout(this.#pollTimer);
    clearInterval(this.#heartbeat);
    this.#pollTimer = undefined;
    this.#heartbeat = undefined;
  }

  async #beat() {
    const streams = this.#allStreams();
    for (const s of streams) {
      if (s.closed) continue;
      void s.sink.note("ping");
      this.#cutOffIfBehind(s);
    }
    await this.#registrations.renew(streams.map(this.#registration));
  }

  /** One read of every busy team's events version, and of the tokens version. */
  async #poll() {
    for (const s of this.#tokens.expired(this.#allStreams())) {
      void this.#end(s, "the token has expired");
    }
    try {
      const teams = [...this.#teams.keys()];
      const [versions, notices, revoked] = await Promise.all([
        eventsVersions(this.ctx.kv, teams),
        noticesVersions(this.ctx.kv, teams),
        this.#tokens.revoked(this.#allStreams()),
      ]);
      for (const s of revoked) void this.#end(s, "the token is no longer valid");
      for (const [teamId, version] of versions) {
        const team = this.#teams.get(teamId);
        if (team && version !== team.version) this.#wake(teamId);
      }
      await sendNotices(this.ctx, { teams: this.#teams, versions: notices, send: this.#sender });
    } catch (e) {
      log.error("stream: polling for events failed", errorFields(e));
    } finally {
      if (this.#pollTimer !== undefined && this.size > 0 && !this.#closing) {
        this.#pollTimer = setTimeout(() => void this.#poll(), POLL_MS);
      }
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
        await round(this.ctx, teamId, team, this.#sender);
      } while (team.again && team.streams.size > 0);
    })().catch((e) => log.error("stream: a round failed", errorFields(e)))
      .finally(() => team.round = null);
  }
}
