/**
 * Presses in ephemeral messages (decisions.md, "Slack's shapes"): an app's ephemeral message with
 * elements is kept, sealed, for 30 minutes, and its person presses them as a message's: Slack's
 * `block_actions` with `container.is_ephemeral`, a `response_url` and a `trigger_id`, answered as
 * a press is. Anyone else, and one past its 30 minutes, finds nothing.
 */
import type { Ctx } from "../context.ts";
import type { Subject } from "../../core/types.ts";
import { notFound } from "../../core/errors.ts";
import { storedId, tsOfMs } from "../../core/ids.ts";
import { ephemeralOf, PRESSABLE_MS } from "../../kv/apps/pressable_ephemerals.ts";
import { memberRef } from "../../kv/workspace.ts";
import { loadChannel } from "../channels/access.ts";
import { authorize } from "../policy.ts";
import { type AppCalls, interactionsUrl, payloadActor } from "./app_call.ts";
import { interactive, payloadChannel, routeTo } from "./request_frame.ts";
import { interact, type Interaction, unsigned } from "./interaction.ts";
import { liveInstall } from "./live_install.ts";
import { type Press, pressOf } from "./pressable.ts";
import { deliverReply } from "./replies.ts";
import { issueAnswerWays } from "./responses.ts";

const gone = () =>
  notFound("No such ephemeral message: its elements can be pressed for 30 minutes.");

/** POST /ephemeral/{id}/actions: its person presses one of its elements. */
export async function pressEphemeral(
  ctx: Ctx,
  calls: AppCalls,
  { subject, ephemeralId, press }: { subject: Subject; ephemeralId: string; press: Press },
): Promise<Interaction> {
  const stored = storedId(ephemeralId);
  const shown = stored ? await ephemeralOf(ctx, stored) : null;
  if (!shown || shown.user_id !== subject.user_id) throw gone();
  const { channel, isMember } = await loadChannel(ctx, subject, shown.channel_id);
  authorize(subject, "element.press", { channel, isMember });
  const action = await pressOf(ctx, { subject, blocks: shown.blocks, press, where: "message" });
  const live = await liveInstall(ctx, { teamId: shown.team_id, appId: shown.app_id });
  const url = live && interactionsUrl(live.app);
  if (!live || url === undefined) throw gone();
  const route = await routeTo(ctx, live.app, url);
  if (route === "unsigned") return unsigned();
  const [actor, ways] = await Promise.all([
    payloadActor(ctx, subject),
    issueAnswerWays(ctx, {
      app: live.app,
      teamId: subject.team_id,
      channelId: channel.id,
      userId: subject.user_id,
      botId: shown.bot_id,
      messageId: null,
    }),
  ]);
  const ts = tsOfMs(Date.parse(shown.expires_at) - PRESSABLE_MS);
  const payload = {
    type: "block_actions",
    ...actor,
    container: { type: "message", message_ts: ts, channel_id: channel.id, is_ephemeral: true },
    channel: payloadChannel(channel),
    state: { values: {} },
    response_url: ways.response_url,
    trigger_id: ways.trigger_id,
    actions: [action],
  };
  return await interact(ctx, calls, {
    request: interactive(route, payload),
    deliver: (reply) =>
      deliverReply(ctx, {
        reply,
        invoker: subject,
        channelId: channel.id,
        app: live.app,
        bot: memberRef(live.bot),
      }),
  });
}
