/**
 * `conversations.*` that change a channel: make, archive, name and describe it, and who is in it.
 * Each calls the domain function its REST twin calls, so the policy's rules and Slack's codes
 * agree.
 */
import { z } from "zod";
import {
  archiveChannel,
  channelAndMembership,
  createChannel,
  unarchiveChannel,
} from "../../domain/channels/channels.ts";
import { changeChannel } from "../../domain/channels/channel_edit.ts";
import { addMember, AlreadyMember, removeMember } from "../../domain/channels/members.ts";
import { NOT_A_MEMBER } from "../../domain/policy.ts";
import { slackChannel } from "../../domain/slack/shapes.ts";
import { ApiError } from "../../core/errors.ts";
import type { Method, MethodCall } from "./method.ts";
import { args, flagArg } from "./args.ts";
import { SlackError } from "./errors.ts";

const create = z.object({ name: z.string().optional(), is_private: flagArg });
const one = z.object({ channel: z.string() });
const invite = one.extend({ users: z.string().optional() });
const kick = one.extend({ user: z.string() });
const rename = one.extend({ name: z.string().optional() });
const topic = one.extend({ topic: z.string() });
const purpose = one.extend({ purpose: z.string() });

/** Slack's cap on one invitation's `users`. */
const MAX_INVITED = 1000;

async function createCall({ ctx, subject, params }: MethodCall) {
  const p = args(create, params);
  if (!p.name?.trim()) throw new SlackError("invalid_name_required");
  const visibility = p.is_private ? "private" : "public";
  const channel = await createChannel(ctx, subject, { name: p.name, visibility });
  return { channel: slackChannel(channel, true) };
}

const archiveCall = (archived: boolean) => async ({ ctx, subject, params }: MethodCall) => {
  const { channel } = args(one, params);
  await (archived ? archiveChannel : unarchiveChannel)(ctx, subject, channel);
  return {};
};

/**
 * The channel changed, as Slack answers a change: read as whoever changed its members may (an
 * admin, a private channel it is not in).
 */
async function channelAfter({ ctx, subject }: MethodCall, id: string) {
  const { channel, isMember } = await channelAndMembership(ctx, subject, id, "member.manage");
  return { channel: slackChannel(channel, isMember) };
}

/**
 * Adds each of `users` in turn, one commit (and one join notice) each. Someone already in is
 * passed over; only when everyone was is it `already_in_channel`. Any other refusal stops there,
 * with those before it added.
 */
async function inviteCall(call: MethodCall) {
  const p = args(invite, call.params);
  const users = [...new Set((p.users ?? "").split(",").map((u) => u.trim()).filter(Boolean))];
  if (users.length === 0) throw new SlackError("no_user");
  if (users.length > MAX_INVITED) throw new SlackError("invalid_arguments");
  if (users.includes(call.subject.user_id)) throw new SlackError("cant_invite_self");
  let added = 0;
  for (const user of users) {
    try {
      await addMember(call.ctx, call.subject, p.channel, () => Promise.resolve(user));
      added++;
    } catch (e) {
      if (!(e instanceof AlreadyMember)) throw e;
    }
  }
  if (added === 0) throw new SlackError("already_in_channel");
  return await channelAfter(call, p.channel);
}

/** Someone else out of the channel; oneself is `conversations.leave` (`cant_kick_self`). */
async function kickCall({ ctx, subject, params }: MethodCall) {
  const p = args(kick, params);
  if (p.user === subject.user_id) throw new SlackError("cant_kick_self");
  await removeMember(ctx, subject, p.channel, p.user);
  return {};
}

/** The caller out of the channel; not in it, Slack answers ok with `not_in_channel`. */
async function leaveCall({ ctx, subject, params }: MethodCall) {
  const { channel } = args(one, params);
  try {
    await removeMember(ctx, subject, channel, subject.user_id);
    return {};
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && e.message === NOT_A_MEMBER) {
      return { not_in_channel: true };
    }
    throw e;
  }
}

async function renameCall(call: MethodCall) {
  const p = args(rename, call.params);
  if (!p.name?.trim()) throw new SlackError("invalid_name_required");
  await changeChannel(call.ctx, call.subject, p.channel, { name: p.name });
  return await channelAfter(call, p.channel);
}

/** An empty topic or purpose clears it, as at Slack. */
const orNull = (text: string) => text === "" ? null : text;

async function setTopicCall({ ctx, subject, params }: MethodCall) {
  const p = args(topic, params);
  const channel = await changeChannel(ctx, subject, p.channel, { topic: orNull(p.topic) });
  return { channel: slackChannel(channel, true) };
}

async function setPurposeCall({ ctx, subject, params }: MethodCall) {
  const p = args(purpose, params);
  const channel = await changeChannel(ctx, subject, p.channel, { purpose: orNull(p.purpose) });
  return { channel: slackChannel(channel, true) };
}

export const channelAdminMethods: Record<string, Method> = {
  "conversations.create": { scope: "channels:write", run: createCall },
  "conversations.archive": { scope: "channels:write", run: archiveCall(true) },
  "conversations.unarchive": { scope: "channels:write", run: archiveCall(false) },
  "conversations.rename": { scope: "channels:write", run: renameCall },
  "conversations.setTopic": { scope: "channels:write", run: setTopicCall },
  "conversations.setPurpose": { scope: "channels:write", run: setPurposeCall },
  "conversations.invite": {
    scope: "members:write",
    slackScope: "channels:write.invites",
    run: inviteCall,
  },
  "conversations.kick": { scope: "channels:write", run: kickCall },
  "conversations.leave": { scope: "channels:write", run: leaveCall },
};
