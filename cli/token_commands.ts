import {
  createToken,
  listTokens,
  revokeTokenById,
  rotateTokenById,
} from "../domain/people/tokens.ts";
import { tokenView } from "../domain/views.ts";
import { type Command, secondsFlag, uuidFlag } from "./command.ts";
import { findUser } from "../domain/people/workspace.ts";
import { scopesFlag } from "./scopes_flag.ts";

/** Personal access tokens and bot tokens. The CLI acts as the operator: audit actor null. */
export const tokenCommands: Record<string, Command> = {
  "token:list": {
    usage: "token:list --user <user id>",
    summary: "A user's tokens, without their values.",
    async run(ctx, flags) {
      const user = await findUser(ctx, uuidFlag(flags, "user"));
      return (await listTokens(ctx, user.id)).map(tokenView);
    },
  },
  "token:create": {
    usage:
      "token:create --user <user id> --scopes <a,b,...|all> [--name <name>] [--expires-in <seconds, or 90m, 12h, 30d>]",
    summary: "Makes a token for a person or bot with the given scopes; prints its value once.",
    async run(ctx, flags) {
      const scopes = scopesFlag(flags);
      const expiresInSeconds = secondsFlag(flags, "expires-in", null);
      const user = await findUser(ctx, uuidFlag(flags, "user"));
      const { token, value } = await createToken(ctx, user, {
        scopes,
        name: flags.name?.trim() || undefined,
        expiresInSeconds,
        actor: null,
      });
      return { id: token.id, token: value, scopes: token.scopes, expires_at: token.expires_at };
    },
  },
  "token:revoke": {
    usage: "token:revoke --id <token id>",
    summary: "Revokes a token: it stops working at once, everywhere.",
    async run(ctx, flags) {
      const token = await revokeTokenById(ctx, uuidFlag(flags, "id"), null);
      return { id: token.id, revoked_at: token.revoked_at };
    },
  },
  "token:rotate": {
    usage: "token:rotate --id <token id>",
    summary: "Replaces a token with a new value; the old one stops working.",
    async run(ctx, flags) {
      const { token, value } = await rotateTokenById(ctx, uuidFlag(flags, "id"), null);
      return { id: token.id, token: value };
    },
  },
};
