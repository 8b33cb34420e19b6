import type { Ctx } from "../domain/context.ts";
import { notFound } from "../domain/errors.ts";
import type { Team, User } from "../domain/types.ts";
import { getTeam, getUser } from "../kv/workspace.ts";

export async function findTeam(ctx: Ctx, id: string): Promise<Team> {
  const team = await getTeam(ctx.kv, id);
  if (!team) throw notFound(`No team ${id}.`);
  return team;
}

export async function findUser(ctx: Ctx, id: string): Promise<User> {
  const user = await getUser(ctx.kv, id);
  if (!user) throw notFound(`No user ${id}.`);
  return user;
}
