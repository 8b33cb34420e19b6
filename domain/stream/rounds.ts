/**
 * What the stream hub reads, and for whom: a team's round sends its live streams what the team
 * committed since the last one; a stream behind catches up a page at a time, at its reader's
 * pace, until it can join the rounds.
 */
import type { Ctx } from "../context.ts";
import { idTime } from "../../core/ids.ts";
import { after, eventsVersions, readLog } from "../../kv/stream/stream_log.ts";
import { logEvents, type LoggedEvent } from "../../kv/stream/stream_markers.ts";
import { visiblePage } from "./catch_up.ts";
import { deliver } from "./delivery.ts";
import { frontierPosition, type OpenStream, type TeamState } from "./state.ts";
import type { StreamBatch } from "./sink.ts";

/** Log entries read at a time, catching up or live. */
const PAGE = 500;
/** A pending marker this old was left by a process that died before logging it. */
const STALE_PENDING_MS = 2_000;

/** How the hub sends a stream a batch (and cuts off a reader too slow for it). */
export type Send = (stream: OpenStream, batch: StreamBatch) => Promise<void>;

/** Sends the team's live streams what it committed since the last round. */
export async function round(ctx: Ctx, teamId: string, team: TeamState, send: Send) {
  const version = (await eventsVersions(ctx.kv, [teamId])).get(teamId) ?? null;
  if (version === null) return;
  for (;;) {
    const page = await readLog(ctx.kv, teamId, {
      from: team.position,
      frontier: version,
      limit: PAGE,
    });
    logStale(ctx, teamId, page.pending);
    const live = [...team.streams].filter((s) => s.live && !s.closed);
    await deliver(ctx, page.events, live, send);
    if (page.events.length > 0) team.position = page.events.at(-1)!;
    if (!page.more) break;
  }
  team.version = version;
  if (!after(team.position, frontierPosition(version))) team.position = frontierPosition(version);
}

/**
 * Reads on for a stream that is behind its team, a page at a time, each sent once its reader
 * has taken the last: far behind, from what its reader may see (domain/stream/catch_up.ts),
 * then from the team's log. Once it has everything up to the version it read, it is live if
 * no round went past that since (and none is under way).
 */
export async function catchUp(ctx: Ctx, stream: OpenStream, send: Send): Promise<void> {
  if (stream.fromIndexes) {
    const page = await visiblePage(ctx, stream, PAGE);
    if (page) {
      await Promise.all(await deliver(ctx, page.events, [stream], send));
      if (after(page.frontier, stream.cursor)) stream.cursor = page.frontier;
      return;
    }
    stream.fromIndexes = false;
  }
  const teamId = stream.subject.team_id;
  const version = (await eventsVersions(ctx.kv, [teamId])).get(teamId) ?? null;
  const page = await readLog(ctx.kv, teamId, {
    from: stream.cursor,
    frontier: version ?? "",
    limit: PAGE,
  });
  await Promise.all(await deliver(ctx, page.events, [stream], send));
  if (page.more) return;
  const read = frontierPosition(version);
  if (after(read, stream.cursor)) stream.cursor = read;
  // A round under way took its live streams before this one could join, and will move the
  // team past this cursor: join between rounds, or read the gap first.
  const { team } = stream;
  if (team.round) await team.round;
  if (!team.round && !after(team.position, stream.cursor)) stream.live = true;
}

/**
 * Logs pending markers a process that died left behind, so every reader finds them there. A
 * marker's age is its first event's, so its events go together.
 */
function logStale(ctx: Ctx, teamId: string, pending: LoggedEvent[]) {
  const stale = pending.filter((p) => Date.now() - idTime(p.marker) > STALE_PENDING_MS);
  if (stale.length > 0) logEvents(ctx.kv, teamId, stale).catch(() => {});
}
