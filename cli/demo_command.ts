import { createChannel } from "../domain/channels/channels.ts";
import type { Ctx } from "../domain/context.ts";
import { createToken } from "../domain/people/tokens.ts";
import { SCOPES, type Subject, type User } from "../core/types.ts";
import { createTeam, createUser, listTeams, listUsers } from "../domain/people/workspace.ts";
import { addMemberAsOperator } from "../domain/channels/members.ts";
import { ApiError } from "../core/errors.ts";
import { choiceFlag, type Command, PlainText } from "./command.ts";

async function withToken(ctx: Ctx, user: User) {
  const { token, value } = await createToken(ctx, user, {
    scopes: [...SCOPES],
    name: "demo",
    actor: null,
  });
  const subject: Subject = {
    user_id: user.id,
    team_id: user.team_id,
    name: user.name,
    type: user.type,
    role: user.role,
    token_id: token.id,
    scopes: token.scopes,
  };
  return { user, value, subject };
}

/**
 * A second demo would be a second team silently: the newcomer's shell keeps the first one's
 * tokens. It is refused, naming the team and how to go on.
 */
async function refuseSecond(ctx: Ctx, name: string) {
  const team = (await listTeams(ctx)).find((t) => t.name === name);
  if (!team) return;
  const admin = (await listUsers(ctx, team.id, null)).find((u) => u.type === "human");
  throw new ApiError(
    409,
    `A team named "${name}" exists already (${team.id}); its tokens were printed when it was made. ` +
      `For a new token: deno task admin token:create --user ${
        admin?.id ?? "<user id>"
      } --scopes all. ` +
      `For another demo team: deno task admin demo --name <another name>.`,
  );
}

/** The demo as shell lines that set what the README's next commands use. */
const shellLines = (made: Record<string, string>) =>
  Object.entries(made).map(([name, value]) => `export ${name}='${value}'`).join("\n");

/** A ready-to-try workspace for a newcomer. */
export const demoCommands: Record<string, Command> = {
  demo: {
    usage: "demo [--name <team name, default Demo>] [--format json|shell]",
    summary:
      "Makes a demo team with an admin, a bot and their tokens, and prints them (as export lines with --format shell).",
    async run(ctx, flags) {
      const name = flags.name?.trim() || "Demo";
      const format = choiceFlag(flags, "format", ["json", "shell"] as const, "json");
      await refuseSecond(ctx, name);
      const team = await createTeam(ctx, name);
      const admin = await withToken(
        ctx,
        await createUser(
          ctx,
          { teamId: team.id, name: "Ada Admin", type: "human", role: "admin" },
          null,
        ),
      );
      const bot = await withToken(
        ctx,
        await createUser(ctx, { teamId: team.id, name: "Demo Bot", type: "bot" }, null),
      );
      const demo = await createChannel(ctx, admin.subject, { name: "demo", visibility: "public" });
      await addMemberAsOperator(ctx, demo.id, bot.user);
      const actor = (a: typeof admin) => ({
        id: a.user.id,
        name: a.user.name,
        token: a.value,
        token_id: a.subject.token_id,
      });
      if (format === "shell") {
        return new PlainText(shellLines({
          BASE: ctx.settings.baseUrl,
          TEAM: team.id,
          ADA: admin.user.id,
          TOKEN: admin.value,
          BOT: bot.user.id,
          BOT_TOKEN: bot.value,
          CHANNEL: demo.id,
        }));
      }
      return {
        team: { id: team.id, name: team.name },
        admin: actor(admin),
        bot: actor(bot),
        channels: [
          { id: team.general_channel_id, name: "general", members: [admin.user.name] },
          { id: demo.id, name: demo.name, members: [admin.user.name, bot.user.name] },
        ],
        try:
          `curl -H 'Authorization: Bearer ${admin.value}' ${ctx.settings.baseUrl}/api/v1/channels`,
      };
    },
  },
};
