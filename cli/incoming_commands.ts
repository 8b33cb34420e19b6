import {
  createIncoming,
  listIncoming,
  revokeIncomingById,
  rotateVerifySecret,
} from "../domain/webhooks/incoming.ts";
import { incomingView } from "../domain/views.ts";
import { choiceFlag, type Command, uuidFlag } from "./command.ts";
import { VERIFY_SCHEMES } from "../core/incoming_records.ts";
import { findTeam } from "../domain/people/workspace.ts";

/** Incoming webhooks: a secret URL that posts into one channel as one bot. */
export const incomingCommands: Record<string, Command> = {
  "incoming:create": {
    usage:
      "incoming:create --channel <channel id> --bot <bot id> [--name <name>] [--verify <none|standard|github|stripe>]",
    summary:
      "Makes an incoming webhook that posts into a channel as a bot; prints its secret URL once, and with --verify the secret its sender signs with.",
    async run(ctx, flags) {
      const { hook, url, verify_secret } = await createIncoming(ctx, {
        channelId: uuidFlag(flags, "channel"),
        botId: uuidFlag(flags, "bot"),
        name: flags.name,
        verify: choiceFlag(flags, "verify", VERIFY_SCHEMES, "none"),
      }, null);
      return {
        id: hook.id,
        url,
        ...(verify_secret ? { verify: hook.verify!.scheme, verify_secret } : {}),
      };
    },
  },
  "incoming:rotate-verify-secret": {
    usage: "incoming:rotate-verify-secret --id <incoming webhook id>",
    summary:
      "Gives a verifying incoming webhook a new signing secret, printed once; the old one is taken for 24 hours.",
    async run(ctx, flags) {
      const { hook, secret } = await rotateVerifySecret(ctx, uuidFlag(flags, "id"), null);
      return { id: hook.id, verify: hook.verify!.scheme, verify_secret: secret };
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
