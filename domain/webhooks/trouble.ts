/**
 * The owner hears of trouble before it's too late (decisions.md, "Delivery"): when a
 * subscription's failures in a row reach half of WEBHOOKS_DISABLE_AFTER, and again when it is
 * disabled, its owner (for a bot's subscription, the team's admins and owners) gets a direct
 * message from the team's "Integrations" bot, naming the subscription, the last answer and what
 * to do. The commit that makes the transition is one, so one instance tells, once; a success
 * resets the streak, and with it the next warning.
 */
import type { Ctx } from "../context.ts";
import { isActive, isActivePerson } from "../../core/active.ts";
import type { User } from "../../core/types.ts";
import type { Delivery, Subscription } from "../../core/webhook_records.ts";
import { errorFields, log } from "../../core/log.ts";
import { getTeam, getUser, listTeamUsers } from "../../kv/workspace.ts";
import { isAdmin } from "../policy.ts";
import { tellPeople } from "../people/integrations_bot.ts";

/** Who hears of a subscription's trouble: its human owner, else the team's admins and owners. */
async function recipientsOf(ctx: Ctx, sub: Subscription): Promise<User[]> {
  const owner = sub.created_by ? await getUser(ctx.kv, sub.created_by) : null;
  if (owner && isActivePerson(owner)) return [owner];
  const people = await listTeamUsers(ctx.kv, sub.team_id);
  return people.filter((u) => isAdmin(u) && isActive(u));
}

const lastAnswer = (d: Delivery) =>
  d.response_status !== null ? `HTTP ${d.response_status}` : d.error ?? "no answer";

/** What the message says, in plain words, with what to do. */
function wordsOf(
  sub: Subscription,
  { stage, last, disableAfter }: { stage: Stage; last: Delivery; disableAfter: number },
): string {
  const named = `Your webhook subscription "${sub.name}" (${sub.url})`;
  if (stage === "half") {
    return `${named} has failed ${sub.consecutive_failures} times in a row; the last answer was ` +
      `${lastAnswer(last)}. After ${disableAfter} it is disabled. Fix the endpoint: its next ` +
      `success resets the count. Its deliveries: GET /api/v1/webhooks/${sub.id}.`;
  }
  return `${named} is disabled after ${disableAfter} failures in a row; the last answer was ` +
    `${lastAnswer(last)}, and its pending retries were dropped. Fix the endpoint, re-enable it ` +
    `(the settings screen, or deno task admin webhook:enable --id ${sub.id}), then send what it ` +
    `missed with POST /api/v1/webhooks/${sub.id}/recover.`;
}

export type Stage = "half" | "disabled";

/** Tells the subscription's people of its trouble, each in their direct message with the bot. */
export async function tellOfTrouble(
  ctx: Ctx,
  { subscription, stage, last }: { subscription: Subscription; stage: Stage; last: Delivery },
): Promise<void> {
  const team = await getTeam(ctx.kv, subscription.team_id);
  if (!team) return;
  const body = wordsOf(subscription, {
    stage,
    last,
    disableAfter: ctx.settings.webhooks.disableAfter,
  });
  await tellPeople(ctx, { team, people: await recipientsOf(ctx, subscription), body });
}

/**
 * What the delivery engine calls when a commit made a transition: tells, logging a failure, and
 * keeps what it is telling so a stopping engine waits for it (the message isn't lost to a deploy).
 */
export class TroubleTeller {
  readonly #telling = new Set<Promise<void>>();

  constructor(private readonly ctx: Ctx) {}

  tell = (subscription: Subscription, { stage, last }: { stage: Stage; last: Delivery }) => {
    const telling = tellOfTrouble(this.ctx, { subscription, stage, last }).catch((e) =>
      log.error("delivery: telling a subscription's people of its trouble failed", {
        subscription_id: subscription.id,
        ...errorFields(e),
      })
    ).finally(() => this.#telling.delete(telling));
    this.#telling.add(telling);
  };

  async settled(): Promise<void> {
    await Promise.all(this.#telling);
  }
}
