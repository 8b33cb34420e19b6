import { type ChannelAccess, createDirectChannel } from "../domain/channels.ts";
import type { Ctx } from "../domain/context.ts";
import { invalid, notFound } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";
import { commitMemberAdded } from "../domain/members.ts";
import { denialError, membersFrozen } from "../domain/policy.ts";
import { retrying } from "../domain/retry.ts";
import type { MemberRef, User } from "../domain/types.ts";
import { getChannelFor } from "../kv/channels.ts";
import { type Command, listFlag, UsageError, uuidFlag } from "./command.ts";
import { findUser } from "./lookup.ts";

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
  if (member.versionstamp !== null) {
    throw invalid("user", "The user is already a member of this channel.");
  }
  return { entry: channel, channel: channel.value, isMember: false };
}

/** Adds a member with the API's commit (notice and events), re-reading if a change beat it. */
export function addMemberAsOperator(ctx: Ctx, channelId: string, user: User): Promise<MemberRef> {
  return retrying(
    "add member",
    async () => await commitMemberAdded(ctx, await operatorAccess(ctx, channelId, user), user),
  );
}

/** Direct messages and channel membership, as an operator. */
export const channelCommands: Record<string, Command> = {
  "dm:create": {
    usage: "dm:create --users <user id>,<user id>[,...]",
    async run(ctx, flags) {
      const ids = [...new Set(listFlag(flags, "users").map((id) => id.toLowerCase()))];
      if (ids.length < 2) throw new UsageError("--users must name at least two different users.");
      if (!ids.every(isUuid)) throw new UsageError("--users must be uuids.");
      const users = await Promise.all(ids.map((id) => findUser(ctx, id)));
      const channel = await createDirectChannel(ctx, users);
      return { id: channel.id };
    },
  },
  "member:add": {
    usage: "member:add --channel <channel id> --user <user id>",
    async run(ctx, flags) {
      const channelId = uuidFlag(flags, "channel");
      const user = await findUser(ctx, uuidFlag(flags, "user"));
      const added = await addMemberAsOperator(ctx, channelId, user);
      return { channel_id: channelId, user_id: added.id };
    },
  },
};
