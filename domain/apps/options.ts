/**
 * Options from the app (decisions.md, "Options from the app"): an `external_select` (or its
 * `multi_` form) in a message or a view asks the app for its options as the person types. The
 * service sends Slack's `block_suggestion` (to `message_menu_options_url`, else the request URL,
 * or over Socket Mode) and gives back the `options` or `option_groups` it answers (Bolt's
 * `app.options`), checked as Block Kit's; an app that fails gives none, and says why.
 */
import { z } from "zod";
import type { Ctx } from "../context.ts";
import type { Block, Message, Subject } from "../../core/types.ts";
import type { App } from "../../core/app_records.ts";
import { invalid } from "../../core/errors.ts";
import { tsOfMs } from "../../core/ids.ts";
import type { AttemptOutcome } from "../../core/outbound/send.ts";
import { loadChannelWith } from "../channels/access.ts";
import { messageIn, messageKeyFor } from "../messages/access.ts";
import { authorize } from "../policy.ts";
import { slackMessage } from "../slack/shapes.ts";
import { type AppCalls, interactionsUrl, NOT_CONNECTED, payloadActor } from "./app_call.ts";
import { interactive, NO_SIGNING_SECRET, payloadChannel, routeTo } from "./request_frame.ts";
import { installOfBot } from "./bot_install.ts";
import { liveInstall } from "./live_install.ts";
import { appOf, stateOf } from "./view_parts.ts";
import { personsStack, slackView } from "./views.ts";

/** What a person typed into an external menu, and which one. */
export interface Suggesting {
  action_id: string;
  block_id?: string;
  value: string;
}

const text = z.object({ type: z.enum(["plain_text", "mrkdwn"]), text: z.string().max(75) });
const option = z.object({ text, value: z.string().min(1).max(150) });
const answer = z.union([
  z.object({ options: z.array(option).max(100) }),
  z.object({
    option_groups: z.array(z.object({ label: text, options: z.array(option).max(100) }))
      .max(100),
  }),
]);

/** What the app offered: options or groups of them, or why there are none. */
export type Offered = {
  options: z.infer<typeof option>[] | null;
  option_groups: { label: unknown; options: unknown[] }[] | null;
  error: string | null;
};

/** Nothing asked yet: the person typed less than the menu's `min_query_length`. */
const NONE_YET: Offered = { options: [], option_groups: null, error: null };
const tooShort = (menu: { min_query_length?: number }, s: Suggesting) =>
  s.value.length < (menu.min_query_length ?? 0);

/** The external menu `s` names among `blocks`; 422 on `action_id` when there is none. */
function externalMenu(blocks: Block[], s: Suggesting) {
  for (const [i, b] of blocks.entries()) {
    const blockId = b.block_id ?? `block-${i}`;
    if (s.block_id && s.block_id !== blockId) continue;
    const inside = [
      ...(b.type === "actions" ? b.elements as { type: string; action_id?: string }[] : []),
      ...(b.type === "section" && b.accessory ? [b.accessory as { type: string }] : []),
      ...(b.type === "input" ? [b.element as { type: string }] : []),
    ] as { type: string; action_id?: string; min_query_length?: number }[];
    const menu = inside.find((e) =>
      e.action_id === s.action_id && e.type.endsWith("external_select")
    );
    if (menu) return { blockId, menu };
  }
  throw invalid("action_id", "There is no such external menu here now.");
}

/** Asks the app, and reads its answer. */
async function ask(
  ctx: Ctx,
  calls: AppCalls,
  { app, payload }: { app: App; payload: Record<string, unknown> },
): Promise<Offered> {
  const url = interactionsUrl(app, { options: true });
  if (url === undefined) {
    throw invalid("action_id", "The app answers no interactions: it offers no options.");
  }
  const route = await routeTo(ctx, app, url);
  if (route === "unsigned") return { options: null, option_groups: null, error: NO_SIGNING_SECRET };
  return offeredOf(await calls.call(ctx, interactive(route, payload)));
}

function offeredOf(outcome: AttemptOutcome): Offered {
  const none = { options: null, option_groups: null };
  if (!outcome.succeeded) {
    const why = outcome.error === NOT_CONNECTED
      ? NOT_CONNECTED
      : outcome.response_status
      ? `the app answered HTTP ${outcome.response_status}`
      : `the app is unreachable (${outcome.error})`;
    return { ...none, error: why };
  }
  let body: unknown = null;
  try {
    body = JSON.parse(outcome.response_body ?? "");
  } catch {
    // Not JSON: read below as nothing offered.
  }
  const parsed = answer.safeParse(body);
  if (!parsed.success) {
    return { ...none, error: "the app answered no options the service can read" };
  }
  return "options" in parsed.data
    ? { options: parsed.data.options, option_groups: null, error: null }
    : { options: null, option_groups: parsed.data.option_groups, error: null };
}

/** GET /views/{view}/options: the person of a modal or Home types into one of its menus. */
export async function viewOptions(
  ctx: Ctx,
  calls: AppCalls,
  { subject, viewId, suggesting }: { subject: Subject; viewId: string; suggesting: Suggesting },
): Promise<Offered> {
  const { stack, view } = await personsStack(ctx, subject, { viewId });
  const { blockId, menu } = externalMenu(view.blocks, suggesting);
  if (tooShort(menu, suggesting)) return NONE_YET;
  const { app } = await appOf(ctx, stack);
  const state = await stateOf(ctx, { subject, view, values: {}, required: false });
  return await ask(ctx, calls, {
    app,
    payload: {
      ...suggestion(suggesting, blockId),
      ...await payloadActor(ctx, subject),
      container: { type: "view", view_id: view.id },
      view: slackView(stack, view, state),
    },
  });
}

/** GET /channels/{channel}/messages/{message}/options: a person types into a message's menu. */
export async function messageOptions(
  ctx: Ctx,
  calls: AppCalls,
  { subject, channelId, messageId, suggesting }: {
    subject: Subject;
    channelId: string;
    messageId: string;
    suggesting: Suggesting;
  },
): Promise<Offered> {
  const read = await loadChannelWith<{ message: Message }>(ctx, subject, channelId, {
    extra: { message: messageKeyFor(messageId) },
  });
  const message = messageIn(read.channel, read.extra.message).value;
  authorize(subject, "element.press", read);
  const { blockId, menu } = externalMenu(message.blocks ?? [], suggesting);
  if (tooShort(menu, suggesting)) return NONE_YET;
  const install = await installOfBot(ctx, { teamId: message.team_id, botId: message.author.id });
  const live = install &&
    await liveInstall(ctx, { teamId: install.team_id, appId: install.app_id });
  if (!live) throw invalid("message", "This message's menus belong to no installed app.");
  const shown = slackMessage(message);
  return await ask(ctx, calls, {
    app: live.app,
    payload: {
      ...suggestion(suggesting, blockId),
      ...await payloadActor(ctx, subject),
      container: {
        type: "message",
        message_ts: shown.ts,
        channel_id: channelId,
        is_ephemeral: false,
      },
      channel: payloadChannel(read.channel),
      message: shown,
    },
  });
}

const suggestion = (s: Suggesting, blockId: string) => ({
  type: "block_suggestion",
  action_id: s.action_id,
  block_id: blockId,
  value: s.value,
  action_ts: tsOfMs(Date.now()),
});
