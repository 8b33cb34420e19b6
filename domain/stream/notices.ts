/**
 * What a stream carries besides the log: notices for one person (an ephemeral message, a view
 * opened for them), relayed through the store to every instance. They have no place in the log,
 * so no SSE id, and a stream resumed later does not get them again.
 */
import type { Ctx } from "../context.ts";
import { noticesAfter } from "../../kv/ephemeral.ts";
import type { Send } from "./rounds.ts";
import { StreamBatch, StreamedEvent } from "./sink.ts";
import type { TeamState } from "./state.ts";

/**
 * Sends each notice relayed since a team's last look to its person's streams here, for the teams
 * whose notices `versions` moved. A stream filtered by `types` or `channel_ids` keeps to its
 * filter.
 */
export async function sendNotices(
  ctx: Ctx,
  { teams, versions, send }: {
    teams: Map<string, TeamState>;
    versions: Map<string, string | null>;
    send: Send;
  },
) {
  for (const [teamId, version] of versions) {
    const team = teams.get(teamId);
    if (team && version !== null && version !== team.noticesSeen) {
      await sendTeamNotices(ctx, { teamId, team, send });
    }
  }
}

async function sendTeamNotices(
  ctx: Ctx,
  { teamId, team, send }: { teamId: string; team: TeamState; send: Send },
) {
  const fresh = await noticesAfter(ctx, teamId, team.noticesSeen);
  if (fresh.length === 0) return;
  team.noticesSeen = fresh.at(-1)!.id;
  for (const notice of fresh) {
    const batch = new StreamBatch([new StreamedEvent("", notice.type, notice.data)]);
    for (const stream of team.streams) {
      if (stream.closed || stream.subject.user_id !== notice.user_id) continue;
      const { types, channelIds } = stream.filter;
      if (types && !(types as readonly string[]).includes(notice.type)) continue;
      if (channelIds && notice.channel_id && !channelIds.includes(notice.channel_id)) continue;
      void send(stream, batch);
    }
  }
}
