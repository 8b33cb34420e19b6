import type { Ctx } from "../context.ts";
import { systemBot } from "./integrations_bot.ts";
import { authorize } from "../policy.ts";
import { type Actor } from "../principals.ts";
import type { Role, Subject, Team, User } from "../../core/types.ts";
import { generalChannelFor } from "../channels/channels.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { newId, nowIso, storedId } from "../../core/ids.ts";
import { checkName } from "../text.ts";
import { standardEmoji } from "../messages/emoji_names.ts";
import { cleanEmail, emailFree } from "./email.ts";
import {
  getTeam,
  getUser,
  insertCustomEmoji,
  insertTeam,
  insertUser,
  listCustomEmoji,
  listTeams as listAllTeams,
  listTeamUsers,
} from "../../kv/workspace.ts";

/** Creates a team and its general channel. */
export async function createTeam(ctx: Ctx, name: string): Promise<Team> {
  if (!checkName("name", name).trim()) throw invalid("name", "The team name is required.");
  const team: Team = {
    id: newId(),
    name: name.trim(),
    general_channel_id: newId(),
    created_at: nowIso(),
  };
  await insertTeam(ctx.kv, team, generalChannelFor(team));
  await systemBot(ctx, team);
  return team;
}

export const listTeams = (ctx: Ctx) => listAllTeams(ctx.kv);

/** A team's people and bots, oldest first: for its admins and owners, and the operator. */
export async function listUsers(ctx: Ctx, teamId: string, actor: Actor): Promise<User[]> {
  authorize(actor, "team.administer", { team_id: teamId });
  return await listTeamUsers(ctx.kv, (await findTeam(ctx, teamId)).id);
}

/** The people and bots of the subject's team, oldest first: anyone of the team may see them. */
export async function teamPeople(ctx: Ctx, actor: Actor & object): Promise<User[]> {
  authorize(actor, "team.read", { team_id: actor.team_id });
  return await listTeamUsers(ctx.kv, actor.team_id);
}

/** A person or bot of the subject's team by id; anyone else, and an unknown id, alike: 404. */
export async function teamPerson(ctx: Ctx, actor: Actor & object, id: string): Promise<User> {
  const stored = storedId(id);
  const user = stored ? await getUser(ctx.kv, stored) : null;
  authorize(actor, "team.read", { team_id: user?.team_id ?? "" });
  if (!user) throw notFound("No such user.");
  return user;
}

/** A team by id, or the 404 naming it. */
export async function findTeam(ctx: Ctx, teamId: string): Promise<Team> {
  const team = await getTeam(ctx.kv, teamId);
  if (!team) throw notFound(`No team ${teamId}.`);
  return team;
}

/** A user by id, or the 404 naming it. */
export async function findUser(ctx: Ctx, userId: string): Promise<User> {
  const user = await getUser(ctx.kv, userId);
  if (!user) throw notFound(`No user ${userId}.`);
  return user;
}

/**
 * Creates a human (who joins the general channel) or a bot (who joins nothing): the team's
 * admins and owners, and the operator, may.
 */
export async function createUser(
  ctx: Ctx,
  input:
    & { teamId: string; name: string; email?: string | null }
    & (
      | { type: "human"; role: Role }
      | { type: "bot" }
    ),
  actor: Actor,
): Promise<User> {
  authorize(actor, "team.administer", { team_id: input.teamId });
  const team = await findTeam(ctx, input.teamId);
  if (!checkName("name", input.name).trim()) throw invalid("name", "The name is required.");
  const email = input.email ? cleanEmail(input.email) : null;
  if (email) await emailFree(ctx, team.id, email);
  const user: User = {
    id: newId(),
    team_id: team.id,
    name: input.name.trim(),
    type: input.type,
    role: input.type === "human" ? input.role : null,
    created_at: nowIso(),
    ...(email ? { email } : {}),
  };
  await insertUser(ctx.kv, user, team);
  return user;
}

const EMOJI_NAME = /^[a-z0-9_+-]{1,30}$/;

/** Adds a custom emoji, usable as `:name:` in reactions. */
export async function createCustomEmoji(ctx: Ctx, teamId: string, name: string): Promise<string> {
  await findTeam(ctx, teamId);
  if (!EMOJI_NAME.test(name)) {
    throw invalid("name", "An emoji name is 1 to 30 characters of a-z, 0-9, _, + and -.");
  }
  const standard = standardEmoji(name);
  if (standard) {
    throw invalid("name", `:${name}: is the standard emoji ${standard}; choose another name.`);
  }
  await insertCustomEmoji(ctx.kv, teamId, name);
  return name;
}

/** The custom emoji of the subject's team, by name: anyone of the team reacts with them. */
export const customEmojiOf = (ctx: Ctx, subject: Subject) =>
  listCustomEmoji(ctx.kv, subject.team_id);

/** A user by id, or null. */
export const userById = (ctx: Ctx, id: string) => getUser(ctx.kv, id);
