/**
 * `response_url` and `trigger_id` (decisions.md, "response_url", "Modals"): an app's way back to
 * the person who ran its command or pressed its button. A `response_url` takes 10 replies within
 * 30 minutes, on any instance, then answers 404; an unknown one counts as a guess (the caller
 * guards it). A `trigger_id` opens one view within 30 seconds.
 */
import { liveInstall } from "./live_install.ts";
import { isActive } from "../../core/active.ts";
import type { Ctx } from "../context.ts";
import type { App } from "../../core/app_records.ts";
import { notFound } from "../../core/errors.ts";
import { randomBase62, sha256Hex } from "../../core/random.ts";
import { retrying } from "../../core/retry.ts";
import { getResponseTarget, insertAnswerWays, useResponseTarget } from "../../kv/apps/responses.ts";
import { getUser, memberRef } from "../../kv/workspace.ts";
import { subjectOfPerson } from "../principals.ts";
import { type AppReply, deliverReply } from "./replies.ts";
import type { Ephemeral } from "../messages/ephemeral.ts";
import type { Message } from "../../core/types.ts";

export const RESPONSE_URL_USES = 10;
export const RESPONSE_URL_MS = 30 * 60_000;
export const TRIGGER_MS = 30_000;
const SECRET = /^[0-9A-Za-z]{40}$/;
/** Where response URLs live; the last segment is the secret. */
export const RESPONSES_PATH = "/responses";

/** Who a response URL or trigger is for. */
interface For {
  app: App;
  teamId: string;
  channelId: string;
  userId: string;
}

/**
 * A new `response_url` and `trigger_id` for the person and channel, stored in one commit: the
 * URL holds its secret, the trigger opens one view within TRIGGER_MS.
 */
export async function issueAnswerWays(
  ctx: Ctx,
  at: For & { botId: string; messageId: string | null },
): Promise<{ response_url: string; trigger_id: string }> {
  const [secret, triggerSecret] = [randomBase62(40), randomBase62(40)];
  const now = Date.now();
  const who = {
    app_id: at.app.id,
    team_id: at.teamId,
    channel_id: at.channelId,
    user_id: at.userId,
  };
  await insertAnswerWays(ctx.kv, {
    response: {
      hash: sha256Hex(secret),
      target: {
        ...who,
        bot_id: at.botId,
        message_id: at.messageId,
        uses: 0,
        expires_at: new Date(now + RESPONSE_URL_MS).toISOString(),
      },
    },
    trigger: {
      hash: sha256Hex(triggerSecret),
      trigger: { ...who, expires_at: new Date(now + TRIGGER_MS).toISOString(), used: false },
    },
  });
  return {
    response_url: `${ctx.settings.baseUrl}${RESPONSES_PATH}/${secret}`,
    trigger_id: `trigger.${triggerSecret}`,
  };
}

const gone = () => notFound("This response URL is unknown, used up or expired.");

/**
 * A reply posted to a `response_url`: counted (the 11th, or one after 30 minutes, is 404 like an
 * unknown URL), then delivered as the app's reply to the person; an app uninstalled meanwhile, or
 * a person deactivated, ends it too.
 */
export async function replyThroughUrl(
  ctx: Ctx,
  { secret, reply }: { secret: string; reply: AppReply },
): Promise<{ ephemeral: Ephemeral | null; message: Message | null }> {
  if (!SECRET.test(secret)) throw gone();
  const target = await retrying("use a response URL", async () => {
    const entry = await getResponseTarget(ctx.kv, sha256Hex(secret));
    const t = entry.value;
    if (!t || t.uses >= RESPONSE_URL_USES || Date.parse(t.expires_at) <= Date.now()) throw gone();
    return await useResponseTarget(ctx.kv, entry as Deno.KvEntry<typeof t>) ? t : null;
  });
  const [live, person] = await Promise.all([
    liveInstall(ctx, { teamId: target.team_id, appId: target.app_id }),
    getUser(ctx.kv, target.user_id),
  ]);
  if (!live || live.bot.id !== target.bot_id || !person || !isActive(person)) throw gone();
  const { app, bot } = live;
  return await deliverReply(ctx, {
    reply,
    invoker: subjectOfPerson(person),
    channelId: target.channel_id,
    app,
    bot: memberRef(bot),
    original: target.message_id,
  });
}
