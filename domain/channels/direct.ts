/**
 * The direct message of two users of one team (a person and an app's bot, for its Home and its
 * messages tab): one per pair, under an id made from the two, made on first need.
 */
import type { Ctx } from "../context.ts";
import type { Channel, User } from "../../core/types.ts";
import { derivedId } from "../../core/random.ts";
import { keys } from "../../kv/keys.ts";
import { createDirectChannel } from "./channels.ts";

export async function directChannelOf(ctx: Ctx, pair: [User, User]): Promise<Channel> {
  const id = derivedId(`dm|${pair.map((u) => u.id).sort().join("|")}`);
  const found = (await ctx.kv.get<Channel>(keys.channel(id))).value;
  return found ?? await createDirectChannel(ctx, pair, { id });
}
