import { createIncoming, listIncoming, revokeIncomingById } from "../domain/webhooks/incoming.ts";
import { incomingView } from "../domain/views.ts";
import { type Command, uuidFlag } from "./command.ts";
import { findTeam } from "../domain/people/workspace.ts";

/** Incoming webhooks: a secret URL that posts into one channel as one bot. */
export const incomingCommands: Record<string, Command> = {
  "incoming:create": {
    usage: "incoming:create --channel <channel id> --bot <bot id> [--name <name>]",
    summary:
      "Makes an incoming webhook that posts into a channel as a bot; prints its secret URL once.",
    async run(ctx, flags) {
      const { hook, url } = await createIncoming(ctx, {
        channelId: uuidFlag(flags, "channel"),
        botId: uuidFlag(flags, "bot"),
        name: flags.name,
      }, null);
      return { id: hook.id, url };
    },
  },
  "incoming:revoke": {
    usage: "incoming:revoke --id <incoming webhook id>",
    summary: "Revokes an incoming webhook: its URL stops working.",
    async run(ctx, flags) {
      const hook = await revokeIncomingById(ctx, uuidFlag(flags, "id"), null);
      return { id: hook.id, revoked_at: hook.revoked_at };
    },
  },
  "incoming:list": {
    usage: "incoming:list --team <team id>",
    summary: "The team's incoming webhooks, without their secret URLs.",
    async run(ctx, flags) {
      const team = await findTeam(ctx, uuidFlag(flags, "team"));
      return (await listIncoming(ctx, team.id)).map(incomingView);
    },
  },
};
