/**
 * The team's "Integrations" bot: how the service tells people of trouble they must act on (a
 * failing webhook, an app away with events waiting), in their direct message with it.
 */
import type { Ctx } from "../context.ts";
import type { Channel, Team, User } from "../../core/types.ts";
import { newId, nowIso } from "../../core/ids.ts";
import { derivedId } from "../../core/random.ts";
import { keys } from "../../kv/keys.ts";
import { getUser, insertSystemBot, systemBotIdOf } from "../../kv/workspace.ts";
import { subjectOfPerson } from "../principals.ts";
import { postMessage } from "../messages/messages.ts";
import { createDirectChannel } from "../channels/channels.ts";

/** The system bot's name, as people see it in their direct messages. */
const SYSTEM_BOT_NAME = "Integrations";

/**
 * The team's "Integrations" bot, made with the team (and on first need for a team made before
 * it): in no channel, never given a token.
 */
export async function systemBot(ctx: Ctx, team: Team): Promise<User> {
  for (;;) {
    const id = await systemBotIdOf(ctx.kv, team.id);
    const found = id ? await getUser(ctx.kv, id) : null;
    if (found) return found;
    const bot: User = {
      id: newId(),
      team_id: team.id,
      name: SYSTEM_BOT_NAME,
      type: "bot",
      role: null,
      created_at: nowIso(),
      system: true,
    };
    // Another instance making it at the same moment wins: its bot is then read.
    if (await insertSystemBot(ctx.kv, team, bot)) return bot;
  }
}

/** The bot's direct message with a person, made on first need. */
async function directWith(ctx: Ctx, bot: User, person: User): Promise<Channel> {
  const id = derivedId(`integrations-dm|${bot.id}|${person.id}`);
  const found = (await ctx.kv.get<Channel>(keys.channel(id))).value;
  return found ?? await createDirectChannel(ctx, [bot, person], { id });
}

/** Tells each of `people` `body`, in their direct message with the team's Integrations bot. */
export async function tellPeople(
  ctx: Ctx,
  { team, people, body }: { team: Team; people: User[]; body: string },
): Promise<void> {
  const bot = await systemBot(ctx, team);
  for (const person of people) {
    const dm = await directWith(ctx, bot, person);
    await postMessage(ctx, subjectOfPerson(bot), dm.id, { ok: true, value: { body } });
  }
}
