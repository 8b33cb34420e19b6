import { createDirectChannel, listTeamChannels } from "../domain/channels/channels.ts";
import { isUuid } from "../core/ids.ts";
import { addMemberAsOperator, AlreadyMember } from "../domain/channels/members.ts";
import { type Command, listFlag, UsageError, uuidFlag } from "./command.ts";
import { findUser } from "../domain/people/workspace.ts";

/** Direct messages and channel membership, as an operator. */
export const channelCommands: Record<string, Command> = {
  "channel:list": {
    usage: "channel:list --team <team id>",
    summary: "A team's channels, direct messages included, by name.",
    async run(ctx, flags) {
      const channels = await listTeamChannels(ctx, uuidFlag(flags, "team"), null);
      return channels.map(({ id, name, visibility, is_direct, is_archived }) => ({
        id,
        name,
        visibility,
        is_direct,
        is_archived,
      }));
    },
  },
  "dm:create": {
    usage: "dm:create --users <user id>,<user id>[,...]",
    summary: "Opens a direct message between two or more people of one team.",
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
    summary: "Adds a person or a bot to a channel (an operator's way past the channel's rules).",
    async run(ctx, flags, _calls, say) {
      const channelId = uuidFlag(flags, "channel");
      const user = await findUser(ctx, uuidFlag(flags, "user"));
      try {
        const added = await addMemberAsOperator(ctx, channelId, user);
        return { channel_id: channelId, user_id: added.id, added: true };
      } catch (e) {
        // What was asked is so already: a script run twice (set -e) goes on.
        if (!(e instanceof AlreadyMember)) throw e;
        say(`${user.name} is already a member of this channel; nothing changed.`);
        return { channel_id: channelId, user_id: user.id, added: false };
      }
    },
  },
};
