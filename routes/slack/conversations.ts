/** `conversations.*`: channels, their messages and members, as the REST API reads them. */
import { z } from "zod";
import { channelAndMembership, pageChannels } from "../../domain/channels/channels.ts";
import { listMembers } from "../../domain/channels/members.ts";
import { listMessages } from "../../domain/messages/list.ts";
import { showMessage } from "../../domain/messages/messages.ts";
import { messageIdByTs } from "../../domain/messages/by_ts.ts";
import { slackChannel, slackMessage } from "../../domain/slack/shapes.ts";
import { openDirect } from "../../domain/channels/direct.ts";
import { joinableChannels, joinChannel, joinsAsApp } from "../../domain/channels/join.ts";
import type { Channel } from "../../core/types.ts";
import { kindOf } from "../../core/channel_kind.ts";
import type { ChannelKind } from "../../core/webhook_records.ts";
import type { Method, MethodCall } from "./method.ts";
import { args, countArg, flagArg } from "./args.ts";
import { offsetPage } from "./paging.ts";
import { SlackError } from "./errors.ts";

const list = z.object({
  types: z.string().optional(),
  exclude_archived: flagArg,
  limit: countArg(100, 1000),
  cursor: z.string().optional(),
});
const info = z.object({ channel: z.string() });
const history = z.object({
  channel: z.string(),
  limit: countArg(100, 1000),
  cursor: z.string().optional(),
  include_all_metadata: flagArg,
});
const replies = history.extend({ ts: z.string() });
const open = z.object({ users: z.string(), return_im: flagArg });
const mine = z.object({
  user: z.string().optional(),
  types: z.string().optional(),
  exclude_archived: flagArg,
  limit: countArg(100, 1000),
  cursor: z.string().optional(),
});

/** Slack's conversation types, by our channels' kinds. */
const SLACK_TYPES: Record<ChannelKind, string> = {
  direct: "im",
  private: "private_channel",
  public: "public_channel",
};
const typeOf = (c: Channel) => SLACK_TYPES[kindOf(c)];

const nextCursor = (cursor: string | null) => ({
  response_metadata: { next_cursor: cursor ?? "" },
});

/** The channels the subject is in, of the types asked (Slack's default: public channels). */
async function memberOf(
  { ctx, subject }: MethodCall,
  p: { types?: string; exclude_archived: boolean; limit: number; cursor?: string },
  everyType: boolean,
) {
  const asked = p.types ??
    (everyType ? "public_channel,private_channel,mpim,im" : "public_channel");
  const types = asked.split(",").map((t) => t.trim());
  const page = await pageChannels(ctx, subject, { limit: p.limit, cursor: p.cursor || null });
  const channels = page.channels
    .filter((c) => types.includes(typeOf(c)) && !(p.exclude_archived && c.is_archived))
    .map((c) => slackChannel(c, true));
  return { channels, ...nextCursor(page.nextCursor) };
}

/**
 * conversations.list: the caller's channels; for an installed app's bot with `channels:join`,
 * every public channel of its team too, each with `is_member`, so it can find one to join.
 */
async function listCall(call: MethodCall) {
  const p = args(list, call.params);
  if (!await joinsAsApp(call.ctx, call.subject)) return await memberOf(call, p, true);
  const types = (p.types ?? "public_channel,private_channel,mpim,im").split(",").map((t) =>
    t.trim()
  );
  const mine = await pageChannels(call.ctx, call.subject, { limit: 1000, cursor: null });
  const all = [
    ...(await joinableChannels(call.ctx, call.subject)),
    ...mine.channels.filter((c) => typeOf(c) !== "public_channel")
      .map((channel) => ({ channel, isMember: true })),
  ].filter(({ channel: c }) => types.includes(typeOf(c)) && !(p.exclude_archived && c.is_archived));
  const page = offsetPage(all, { limit: p.limit, cursor: p.cursor || undefined });
  return {
    channels: page.items.map(({ channel, isMember }) => slackChannel(channel, isMember)),
    ...nextCursor(page.next),
  };
}

/** conversations.join: the caller joins a channel (a bot: as an app with `channels:join`). */
async function joinCall({ ctx, subject, params }: MethodCall) {
  const { channel, alreadyIn } = await joinChannel(ctx, subject, args(info, params).channel);
  return {
    channel: slackChannel(channel, true),
    ...(alreadyIn
      ? { warning: "already_in_channel", response_metadata: { warnings: ["already_in_channel"] } }
      : {}),
  };
}

/** users.conversations: the caller's own channels (another user's: `invalid_arguments`). */
function usersConversations(call: MethodCall) {
  const p = args(mine, call.params);
  if (p.user && p.user !== call.subject.user_id) throw new SlackError("invalid_arguments");
  return memberOf(call, p, false);
}

/** conversations.open: a direct message with one other person (the one there is, or new). */
async function openCall({ ctx, subject, params }: MethodCall) {
  const p = args(open, params);
  const dm = await openDirect(ctx, subject, p.users.split(",").map((u) => u.trim()));
  return { channel: slackChannel(dm, true) };
}

async function infoCall({ ctx, subject, params }: MethodCall) {
  const { channel, isMember } = await channelAndMembership(
    ctx,
    subject,
    args(info, params).channel,
  );
  return { channel: slackChannel(channel, isMember) };
}

async function historyCall({ ctx, subject, params }: MethodCall) {
  const p = args(history, params);
  const page = await listMessages(ctx, subject, p.channel, {
    query: { cursor: p.cursor || undefined, limit: p.limit },
    path: `${ctx.settings.baseUrl}/api/v1/channels/${p.channel}/messages`,
  });
  return {
    messages: page.messages.map((m) => slackMessage(m, { metadata: p.include_all_metadata })),
    has_more: page.meta.next_cursor !== null,
    pin_count: 0,
    ...nextCursor(page.meta.next_cursor),
  };
}

/** A thread: its root first (on the first page), then its replies, oldest first. */
async function repliesCall({ ctx, subject, params }: MethodCall) {
  const p = args(replies, params);
  const named = await showMessage(
    ctx,
    subject,
    p.channel,
    await messageIdByTs(ctx, subject, { channelId: p.channel, ts: p.ts }),
  );
  const root = named.thread_root_id
    ? await showMessage(ctx, subject, p.channel, named.thread_root_id)
    : named;
  const page = await listMessages(ctx, subject, p.channel, {
    query: { thread_root_id: root.id, cursor: p.cursor || undefined, limit: p.limit },
    path: `${ctx.settings.baseUrl}/api/v1/channels/${p.channel}/messages`,
  });
  const rootTs = slackMessage(root).ts as string;
  const messages = [
    ...(p.cursor
      ? []
      : [slackMessage(root, { threadTs: rootTs, metadata: p.include_all_metadata })]),
    ...page.messages.map((m) =>
      slackMessage(m, { threadTs: rootTs, metadata: p.include_all_metadata })
    ),
  ];
  return {
    messages,
    has_more: page.meta.next_cursor !== null,
    ...nextCursor(page.meta.next_cursor),
  };
}

async function membersCall({ ctx, subject, params }: MethodCall) {
  const p = args(history, params);
  const members = await listMembers(ctx, subject, p.channel);
  const page = offsetPage(members.map((m) => m.id), { limit: p.limit, cursor: p.cursor });
  return { members: page.items, ...nextCursor(page.next) };
}

export const conversationMethods: Record<string, Method> = {
  "conversations.list": { scope: "channels:read", run: listCall },
  "conversations.info": { scope: "channels:read", run: infoCall },
  "conversations.history": { scope: "messages:read", run: historyCall },
  "conversations.replies": { scope: "messages:read", run: repliesCall },
  "conversations.members": { scope: "members:read", run: membersCall },
  "conversations.open": { scope: "messages:write", slackScope: "im:write", run: openCall },
  "conversations.join": { scope: "members:write", slackScope: "channels:join", run: joinCall },
  "users.conversations": { scope: "channels:read", run: usersConversations },
};
