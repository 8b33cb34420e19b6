import {
  createCustomEmoji,
  createTeam,
  createUser,
  listTeams,
  listUsers,
} from "../domain/people/workspace.ts";
import { ROLES } from "../core/types.ts";
import { choiceFlag, type Command, requiredFlag, uuidFlag } from "./command.ts";

/** Teams, their people and their custom emoji. */
export const workspaceCommands: Record<string, Command> = {
  "team:create": {
    usage: "team:create --name <name>",
    summary: "Makes a team with its #general channel.",
    async run(ctx, flags) {
      const team = await createTeam(ctx, requiredFlag(flags, "name"));
      return { id: team.id, name: team.name, general_channel_id: team.general_channel_id };
    },
  },
  "team:list": {
    usage: "team:list",
    summary: "Every team of this service.",
    async run(ctx) {
      return (await listTeams(ctx)).map((t) => ({
        id: t.id,
        name: t.name,
        general_channel_id: t.general_channel_id,
        created_at: t.created_at,
      }));
    },
  },
  "user:list": {
    usage: "user:list --team <team id>",
    summary: "A team's people and bots, oldest first.",
    async run(ctx, flags) {
      return (await listUsers(ctx, uuidFlag(flags, "team"), null)).map((u) => ({
        id: u.id,
        name: u.name,
        type: u.type,
        role: u.role,
        email: u.email ?? null,
        created_at: u.created_at,
      }));
    },
  },
  "user:create": {
    usage:
      "user:create --team <team id> --name <name> [--role member|admin|owner] [--email <address>]",
    summary: "Adds a person to a team (role member unless told), who joins #general.",
    async run(ctx, flags) {
      const user = await createUser(ctx, {
        teamId: uuidFlag(flags, "team"),
        name: requiredFlag(flags, "name"),
        type: "human",
        role: choiceFlag(flags, "role", ROLES, "member"),
        email: flags.email,
      }, null);
      return {
        id: user.id,
        name: user.name,
        type: user.type,
        role: user.role,
        ...(user.email ? { email: user.email } : {}),
      };
    },
  },
  "bot:create": {
    usage: "bot:create --team <team id> --name <name>",
    summary: "Adds a bot to a team; give it a token and add it to channels.",
    async run(ctx, flags) {
      const bot = await createUser(ctx, {
        teamId: uuidFlag(flags, "team"),
        name: requiredFlag(flags, "name"),
        type: "bot",
      }, null);
      return { id: bot.id, name: bot.name, type: bot.type };
    },
  },
  "emoji:create": {
    usage: "emoji:create --team <team id> --name <name>",
    summary: "Adds a custom emoji (:name:) that the team can react with.",
    async run(ctx, flags) {
      const name = await createCustomEmoji(
        ctx,
        uuidFlag(flags, "team"),
        requiredFlag(flags, "name"),
      );
      return { name };
    },
  },
};
