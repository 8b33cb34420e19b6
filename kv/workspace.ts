import type { Channel, MemberRef, Team, User } from "../core/types.ts";
import { commitOrThrow, getAll } from "./store/commit.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store/store.ts";
import type { Plan } from "./store/plan.ts";
import { isClosed } from "../core/channel_kind.ts";

/** A team's general channel, as memberships see it: public, never direct. */
const generalOf = (team: Pick<Team, "general_channel_id">): MembershipOf => ({
  id: team.general_channel_id,
  visibility: "public",
  is_direct: false,
});

export const memberRef = (u: Pick<User, "id" | "name" | "type">): MemberRef => ({
  id: u.id,
  name: u.name,
  type: u.type,
});

/** What a membership's indexes need of its channel. */
export type MembershipOf = Pick<Channel, "id" | "visibility" | "is_direct">;

/**
 * Sets a membership and its reverse indexes in a commit, and bumps the channel's members version:
 * a commit that routed events by the old membership checks it, so it can't land after this.
 */
export function setMembership(op: Plan, channel: MembershipOf, user: MemberRef) {
  op.set(keys.member(channel.id, user.id), memberRef(user))
    .set(keys.userChannel(user.id, channel.id), null)
    .set(keys.userChannelsVersion(user.id), Date.now())
    .set(keys.membersVersion(channel.id), Date.now());
  if (isClosed(channel)) op.set(keys.userClosedChannel(user.id, channel.id), null);
}

/** Ends a membership: the reverse of setMembership. */
export function dropMembership(op: Plan, channel: MembershipOf, userId: string) {
  op.delete(keys.member(channel.id, userId))
    .delete(keys.userChannel(userId, channel.id))
    .set(keys.userChannelsVersion(userId), Date.now())
    .set(keys.membersVersion(channel.id), Date.now());
  if (isClosed(channel)) op.delete(keys.userClosedChannel(userId, channel.id));
}

/** Creates a team with its general channel in one commit. */
export async function insertTeam(kv: Store, team: Team, general: Channel): Promise<void> {
  await commitOrThrow(
    kv.atomic()
      .check({ key: keys.team(team.id), versionstamp: null })
      .set(keys.team(team.id), team)
      .set(keys.channel(general.id), general)
      .set(keys.channelsVersion(team.id), Date.now())
      .set(keys.channelSlug(team.id, general.slug), general.id),
    "create team",
  );
}

/** Creates a user; a human also joins the team's general channel, in the same commit. */
export async function insertUser(kv: Store, user: User, team: Team): Promise<void> {
  const op = kv.atomic()
    .check({ key: keys.user(user.id), versionstamp: null })
    .set(keys.user(user.id), user)
    .set(keys.teamUser(team.id, user.id), null);
  if (user.email) {
    const email = keys.userEmail(team.id, user.email);
    op.check({ key: email, versionstamp: null }).set(email, user.id);
  }
  if (user.type === "human") setMembership(op, generalOf(team), memberRef(user));
  await commitOrThrow(op, "create user");
}

/** Every team, oldest first (ids are UUIDv7). */
export async function listTeams(kv: Store): Promise<Team[]> {
  const out: Team[] = [];
  for await (const e of kv.list<Team>({ prefix: keys.teams() })) out.push(e.value);
  return out;
}

/** A team's users, oldest first. */
export async function listTeamUsers(kv: Store, teamId: string): Promise<User[]> {
  const ids: Deno.KvKey[] = [];
  for await (const e of kv.list({ prefix: keys.teamUsers(teamId) })) {
    ids.push(keys.user(e.key[2] as string));
  }
  return (await getAll<User>(kv, ids)).flatMap((e) => e.value ? [e.value] : []);
}

export const getTeam = async (kv: Store, id: string) => (await kv.get<Team>(keys.team(id))).value;

export const getUser = async (kv: Store, id: string) => (await kv.get<User>(keys.user(id))).value;

export async function insertCustomEmoji(kv: Store, teamId: string, name: string) {
  await kv.set(keys.emoji(teamId, name), { name });
}

/** A team's custom emoji names, in name order. */
export async function listCustomEmoji(kv: Store, teamId: string): Promise<string[]> {
  const entries = kv.list<{ name: string }>({ prefix: keys.emojis(teamId) }, { batchSize: 500 });
  return (await Array.fromAsync(entries)).map((e) => e.value.name);
}

/** The id of the team's "Integrations" bot, or null before it is made. */
export const systemBotIdOf = async (kv: Store, teamId: string) =>
  (await kv.get<string>(keys.systemBot(teamId))).value;

/** Stores the team's "Integrations" bot, unless another process made one: false then. */
export async function insertSystemBot(kv: Store, team: Team, bot: User): Promise<boolean> {
  const op = kv.atomic()
    .check({ key: keys.systemBot(team.id), versionstamp: null })
    .set(keys.systemBot(team.id), bot.id)
    .set(keys.user(bot.id), bot)
    .set(keys.teamUser(team.id, bot.id), null);
  return (await op.commit()).ok;
}
