import { createChannel } from "../domain/channels.ts";
import type { Ctx } from "../domain/context.ts";
import { createToken } from "../domain/tokens.ts";
import { SCOPES, type Subject, type User } from "../core/types.ts";
import { createTeam, createUser } from "../domain/workspace.ts";
import { addMemberAsOperator } from "../domain/members.ts";
import type { Command } from "./command.ts";

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

/** A ready-to-try workspace for a newcomer. */
export const demoCommands: Record<string, Command> = {
  demo: {
    usage: "demo",
    summary:
      "Makes a demo team with an admin, a bot, their tokens and a sign-in link, and prints them.",
    async run(ctx) {
      const team = await createTeam(ctx, "Demo");
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
