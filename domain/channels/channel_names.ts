import type { Ctx } from "../context.ts";
import type { Subject } from "../../core/types.ts";
import { notFound } from "../../core/errors.ts";
import { keys } from "../../kv/keys.ts";
import { slugify } from "./slug.ts";

/**
 * A channel named as Slack's clients may name one, `#name`, as its id in the subject's team; an
 * id as it is. Whether the subject may see it is decided where it is used: an unknown name is the
 * 404 an unknown id gets.
 */
export async function channelIdOf(ctx: Ctx, subject: Subject, given: string): Promise<string> {
  if (!given.startsWith("#")) return given;
  const id = (await ctx.kv.get<string>(keys.channelSlug(subject.team_id, slugify(given.slice(1)))))
    .value;
  if (!id) throw notFound("No such channel.");
  return id;
}
