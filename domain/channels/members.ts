import type { Ctx } from "../context.ts";
import { isActive } from "../../core/active.ts";
import type { Channel, MemberRef, Subject, User } from "../../core/types.ts";
import { type ChannelAccess, loadChannel, loadChannelWith } from "./access.ts";
import { denialError, membersFrozen } from "../policy.ts";
import { ApiError, invalid, notFound } from "../../core/errors.ts";
import { storedId } from "../../core/ids.ts";
import { draftMessage } from "../messages/draft.ts";
import { messageEvent } from "../messages/message_events.ts";
import { authorize } from "../policy.ts";
import { retrying } from "../../core/retry.ts";
import { getChannelFor, listMembers as listChannelMembers } from "../../kv/channels.ts";
import { keys } from "../../kv/keys.ts";
import type { Plan } from "../../kv/store/plan.ts";
import { dropMembership, getUser, memberRef, setMembership } from "../../kv/workspace.ts";
import { audienceKeys, audienceOf, emit, type MembershipChange } from "../webhooks/audience.ts";
import type { EventData } from "../webhooks/event_schemas.ts";

const byName = (a: MemberRef, b: MemberRef) =>
  a.name.localeCompare(b.name) || a.id.localeCompare(b.id);

/** A channel's members, by name. Needs normal visibility: admins don't read private channels. */
export async function listMembers(ctx: Ctx, subject: Subject, channelId: string) {
  await loadChannel(ctx, subject, channelId);
  return (await listChannelMembers(ctx.kv, channelId)).sort(byName);
}

/**
 * A join or leave notice as Slack words it (`<@U…> has joined the channel`): who, by mention, so
 * its `text` names them, with the name kept as of now.
 */
const notice = (who: MemberRef, did: "joined" | "left") => ({
  author: who,
  body: `<@${who.id}> has ${did} the channel`,
  mention_names: { [who.id]: who.name },
});

/**
 * Adds `user` to the channel: membership, a `member_joined` notice authored by the user, and the
 * events `channel.member_added` and `message.created`, all in one commit, with `also` (a change
 * that needs the membership, such as an install's) when given. Null when a concurrent change
 * beat the commit (read again and retry).
 */
export async function commitMemberAdded(
  ctx: Ctx,
  access: ChannelAccess,
  user: User,
  also?: Plan,
): Promise<MemberRef | null> {
  const { channel, entry } = access;
  const added = memberRef(user);
  const audience = await audienceAfter(ctx, channel, { userId: user.id, member: true });
  const draft = draftMessage({ channel, ...notice(added, "joined"), type: "member_joined" });
  const joined = ctx.kv.atomic();
  setMembership(joined, channel, added);
  emit(joined, audience, {
    type: "channel.member_added",
    team_id: channel.team_id,
    channel_id: channel.id,
    data: { channel_id: channel.id, user: added } satisfies EventData<"channel.member_added">,
  });
  emit(joined, audience, messageEvent("message.created", draft));
  if (also) joined.include(also);
  const stored = await ctx.kv.append(draft, {
    checks: [
      entry,
      { key: keys.member(channel.id, user.id), versionstamp: null },
      ...audience.checks,
    ],
    alone: true,
    with: joined,
  });
  return stored ? added : null;
}

/**
 * Who hears the events of a membership change: the membership as the change leaves it, so a
 * user hears its own joining and not its own leaving.
 */
async function audienceAfter(ctx: Ctx, channel: Channel, change: MembershipChange) {
  const versions = await ctx.kv.getMany(audienceKeys(channel));
  return await audienceOf(ctx, channel, versions, change);
}

/** Why the system bot is never added: decisions.md, "The owner hears of trouble". */
const SYSTEM_BOT = "The Integrations bot only tells people of trouble: it joins no channel.";

/** Resolves `user_id` to a user of the channel's team who is not in it yet, or a 422. */
async function joinableUser(ctx: Ctx, access: ChannelAccess, userId: unknown): Promise<User> {
  const stored = typeof userId === "string" ? storedId(userId) : null;
  if (!stored) throw invalid("user_id", "The user_id must be the uuid of a member of this team.");
  const user = await getUser(ctx.kv, stored);
  if (!user || user.team_id !== access.channel.team_id) {
    throw invalid("user_id", "The user_id must be the uuid of a member of this team.");
  }
  if (!isActive(user)) throw invalid("user_id", "The user is deactivated.");
  if (user.system) throw invalid("user_id", SYSTEM_BOT);
  if ((await ctx.kv.get(keys.member(access.channel.id, user.id))).versionstamp !== null) {
    throw new AlreadyMember("user_id");
  }
  return user;
}

/**
 * POST /channels/{channel}/members. `readUserId` is called only after the resource and permission
 * checks, so a forbidden request is refused before its body is looked at.
 */
export async function addMember(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  readUserId: () => Promise<unknown>,
): Promise<MemberRef> {
  let userId: unknown;
  let read = false;
  return await retrying("add member", async () => {
    const access = await loadChannel(ctx, subject, channelId, "member.add");
    if (!read) [userId, read] = [await readUserId(), true];
    return await commitMemberAdded(ctx, access, await joinableUser(ctx, access, userId));
  });
}

/** Removes a member, writing a `member_left` notice authored by them (fires message.created). */
export async function removeMember(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  userId: string,
): Promise<void> {
  await retrying("remove member", () => removeOnce(ctx, subject, channelId, userId));
}

async function removeOnce(ctx: Ctx, subject: Subject, channelId: string, given: string) {
  const user = storedId(given);
  // Not a UUID: no membership is read, so the rules below answer as for a non-member.
  const userId = user ?? given;
  const read = await loadChannelWith<{ membership: MemberRef }>(ctx, subject, channelId, {
    extra: { membership: user ? keys.member(channelId, user) : null },
    action: "member.manage",
  });
  const { channel, entry } = read;
  const { membership } = read.extra;
  authorize(subject, "member.remove", {
    ...read,
    userId,
    targetIsMember: membership.versionstamp !== null,
  });
  const left = membership.value!;
  const audience = await audienceAfter(ctx, channel, { userId, member: false });
  const draft = draftMessage({ channel, ...notice(left, "left"), type: "member_left" });
  const leaving = ctx.kv.atomic();
  dropMembership(leaving, channel, userId);
  emit(leaving, audience, messageEvent("message.created", draft));
  const stored = await ctx.kv.append(draft, {
    checks: [entry, membership, ...audience.checks],
    alone: true,
    with: leaving,
  });
  return stored ? true : null;
}

/**
 * The channel, read for an operator: no visibility or permission rules, but the channel's own
 * rules still hold (direct messages keep their members, archived channels are read-only).
 */
async function operatorAccess(ctx: Ctx, channelId: string, user: User): Promise<ChannelAccess> {
  const { channel, member } = await getChannelFor(ctx.kv, channelId, user.id);
  if (channel.versionstamp === null) throw notFound(`No channel ${channelId}.`);
  const frozen = membersFrozen(channel.value);
  if (frozen) throw denialError(frozen);
  if (user.team_id !== channel.value.team_id) {
    throw invalid("user", "The user is not in the channel's team.");
  }
  if (!isActive(user)) throw invalid("user", "The user is deactivated.");
  if (user.system) throw invalid("user", SYSTEM_BOT);
  if (member.versionstamp !== null) {
    throw new AlreadyMember("user");
  }
  return { entry: channel, channel: channel.value, isMember: false };
}

/** The 422 of adding someone already a member: an operator's script may take it as done. */
export class AlreadyMember extends ApiError {
  constructor(field: string) {
    const message = "The user is already a member of this channel.";
    super(422, message, { [field]: [message] });
  }
}

/** Adds a member with the API's commit (notice and events), re-reading if a change beat it. */
export function addMemberAsOperator(ctx: Ctx, channelId: string, user: User): Promise<MemberRef> {
  return retrying(
    "add member",
    async () => await commitMemberAdded(ctx, await operatorAccess(ctx, channelId, user), user),
  );
}
