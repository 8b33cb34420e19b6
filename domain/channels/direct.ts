/**
 * The direct message of two users of one team (a person and an app's bot, for its Home and its
 * messages tab): one per pair, under an id made from the two, made on first need.
 */
import type { Ctx } from "../context.ts";
import { isActive } from "../../core/active.ts";
import type { Channel, Subject, User } from "../../core/types.ts";
import { invalid } from "../../core/errors.ts";
import { derivedId } from "../../core/random.ts";
import { keys } from "../../kv/keys.ts";
import { getUser } from "../../kv/workspace.ts";
import { teamPerson } from "../people/workspace.ts";
import { createDirectChannel } from "./channels.ts";

/** The DM of the pair, as it is or made now. */
export async function directChannelOf(ctx: Ctx, pair: [User, User]): Promise<Channel> {
  const id = derivedId(`dm|${pair.map((u) => u.id).sort().join("|")}`);
  const found = (await ctx.kv.get<Channel>(keys.channel(id))).value;
  return found ?? await createDirectChannel(ctx, pair, { id });
}

/**
 * conversations.open: the subject's direct message with one other person or bot of its team (the
 * one there is, or a new one); 422 on `users` for anyone else, or for more than one.
 */
export async function openDirect(ctx: Ctx, subject: Subject, userIds: string[]) {
  if (userIds.length !== 1) {
    throw invalid("users", "Name one other person: group direct messages are not supported.");
  }
  if (userIds[0] === subject.user_id) throw invalid("users", "Name someone other than yourself.");
  const [me, other] = await Promise.all([
    getUser(ctx.kv, subject.user_id),
    teamPerson(ctx, subject, userIds[0]).catch(() => null),
  ]);
  if (!me || !other || !isActive(other)) throw invalid("users", "No such user in this team.");
  return await directChannelOf(ctx, [me, other]);
}
