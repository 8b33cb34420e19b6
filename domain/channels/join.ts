/**
 * Joining a channel oneself (Slack's `conversations.join`), and what an installed app's bot with
 * Slack's `channels:join` (our `members:write`) may join: every public channel of its team
 * (decisions.md, "More of the Web API"). Reading a channel still needs membership; other bots
 * keep the seed's rule.
 */
import type { Ctx } from "../context.ts";
import { isClosed } from "../../core/channel_kind.ts";
import type { Channel, MemberRef, Subject, User } from "../../core/types.ts";
import { storedId } from "../../core/ids.ts";
import { notFound } from "../../core/errors.ts";
import { retrying } from "../../core/retry.ts";
import { getAll } from "../../kv/store/commit.ts";
import { listTeamChannels } from "../../kv/channels.ts";
import { keys } from "../../kv/keys.ts";
import { getUser } from "../../kv/workspace.ts";
import { authorize, channelNotFound } from "../policy.ts";
import { installOfBot } from "../apps/bot_install.ts";
import { commitMemberAdded } from "./members.ts";

/** Whether the subject is an installed app's bot holding the scope that joins channels. */
export async function joinsAsApp(ctx: Ctx, subject: Subject): Promise<boolean> {
  if (subject.type !== "bot" || !subject.scopes.includes("members:write")) return false;
  return !!await installOfBot(ctx, { teamId: subject.team_id, botId: subject.user_id });
}

/** The channel after the subject joined it (or was in it already). */
export async function joinChannel(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
): Promise<{ channel: Channel; alreadyIn: boolean }> {
  const stored = storedId(channelId);
  if (!stored) throw notFound(channelNotFound(subject));
  const asApp = await joinsAsApp(ctx, subject);
  const user = await getUser(ctx.kv, subject.user_id) as User;
  return await retrying("join channel", async () => {
    const [entry, member] = await ctx.kv.getMany<[Channel, MemberRef]>([
      keys.channel(stored),
      keys.member(stored, subject.user_id),
    ]);
    if (!entry.value) throw notFound(channelNotFound(subject));
    const target = { channel: entry.value, isMember: member.versionstamp !== null };
    authorize(subject, "channel.join", { ...target, joinsAsApp: asApp });
    if (target.isMember) return { channel: entry.value, alreadyIn: true };
    const access = { entry: entry as Deno.KvEntry<Channel>, ...target };
    return await commitMemberAdded(ctx, access, user)
      ? { channel: entry.value, alreadyIn: false }
      : null;
  });
}

/**
 * The public channels of the team an app's bot may join, with whether it is in each: what
 * `conversations.list` shows it. Sorted by name.
 */
export async function joinableChannels(
  ctx: Ctx,
  subject: Subject,
): Promise<{ channel: Channel; isMember: boolean }[]> {
  const all = (await listTeamChannels(ctx.kv, subject.team_id, []))
    .filter((c) => !isClosed(c))
    .sort((a, b) => a.name.localeCompare(b.name));
  const mine = await getAll(ctx.kv, all.map((c) => keys.member(c.id, subject.user_id)));
  return all.map((channel, i) => ({ channel, isMember: mine[i].versionstamp !== null }));
}
