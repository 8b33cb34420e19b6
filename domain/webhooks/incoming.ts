import type { Ctx } from "../context.ts";
import type { AuditAction, Channel, Message, Subject, User } from "../../core/types.ts";
import type { AuditDraft } from "../../kv/audit.ts";
import { ApiError, invalid, notFound } from "../../core/errors.ts";
import { newId, nowIso, storedId } from "../../core/ids.ts";
import { authorize } from "../policy.ts";
import { type Actor, auditActor } from "../principals.ts";
import { postMessageWith } from "../messages/messages.ts";
import { supportedBlocks } from "../messages/blocks.ts";
import { supportedAttachments } from "../messages/attachments.ts";
import type { Settled } from "../../core/settled.ts";
import { retrying } from "../../core/retry.ts";
import { checkName } from "../text.ts";
import { randomBase62, sha256Hex } from "../../core/random.ts";
import { getChannelFor } from "../../kv/channels.ts";
import {
  getIncomingByHash,
  getIncomingById,
  insertIncoming,
  listTeamIncoming,
  replaceIncoming,
} from "../../kv/incoming.ts";
import { getUser } from "../../kv/workspace.ts";
import type { IncomingWebhook, VerifyScheme } from "../../core/incoming_records.ts";
import type { Once } from "../messages/post_guards.ts";
import { newVerification } from "./incoming_senders.ts";
import { mintVerifySecret } from "./incoming_verify.ts";
import { ROTATION_OVERLAP_MS } from "./admin.ts";

/** Random base62 characters of a secret: the whole path segment of the hook's URL. */
const SECRET_CHARS = 40;

/** What anyone with an unknown, revoked or malformed secret gets: the same 404. */
const HOOK_NOT_FOUND = "No such incoming webhook.";
const hookNotFound = () => notFound(HOOK_NOT_FOUND);

/** The hook's bot was taken out of its channel (or the channel is gone): it reaches nothing. */
export class BotLeftChannel extends ApiError {
  constructor() {
    super(404, "This incoming webhook's bot is no longer a member of its channel.");
  }
}

export interface NewIncoming {
  channelId: string;
  botId: string;
  name?: string;
  /** Whose signature its posts must carry (incoming_senders.ts); none when absent. */
  verify?: VerifyScheme;
}

const noSuchChannel = () => notFound("No such channel.");

/** The URL that posts through a hook; it holds the secret, so it is shown once. */
export const hookUrl = (ctx: Ctx, secret: string) => `${ctx.settings.baseUrl}/hooks/${secret}`;

/**
 * Creates an incoming webhook posting into a channel as a bot, which must be a member of it.
 * A person acting must be an admin of the channel's team and see the channel (else the
 * channel's 404). The URL is returned this once.
 */
export async function createIncoming(
  ctx: Ctx,
  input: NewIncoming,
  actor: Actor,
): Promise<{ hook: IncomingWebhook; url: string; verify_secret?: string }> {
  const name = checkName("name", input.name?.trim() || "Incoming webhook");
  const [{ channel, member, other: actorMember }, bot] = await Promise.all([
    getChannelFor(ctx.kv, input.channelId, input.botId, actor?.user_id),
    getUser(ctx.kv, input.botId),
  ]);
  if (channel.versionstamp === null) throw noSuchChannel();
  authorize(actor, "incoming.target", {
    channel: channel.value,
    isMember: actorMember.versionstamp !== null,
  });
  if (!bot || bot.type !== "bot" || bot.team_id !== channel.value.team_id) {
    throw invalid("bot", "The bot must be a bot of the channel's team.");
  }
  if (member.versionstamp === null) {
    throw invalid(
      "bot",
      `The bot must be a member of the channel; add it first: POST /api/v1/channels/${channel.value.id}/members with {"user_id": "${bot.id}"}, the Bots page of the settings screen, or deno task admin member:add --channel ${channel.value.id} --user ${bot.id}.`,
    );
  }
  if (channel.value.is_archived) throw invalid("channel", "The channel is archived.");
  const made = newHook({ channel: channel.value, bot, name });
  const { verify, secret: verifySecret } = await newVerification(ctx, input.verify);
  const hook = verify ? { ...made.hook, verify } : made.hook;
  await insertIncoming(
    ctx.kv,
    hook,
    hookAudit(hook, { action: "incoming_webhook.created", actor }),
  );
  return {
    hook,
    url: hookUrl(ctx, made.secret),
    ...(verifySecret ? { verify_secret: verifySecret } : {}),
  };
}

/** A new hook's record and its secret, for a channel and bot the caller checked. */
export function newHook(
  { channel, bot, name }: { channel: Channel; bot: User; name: string },
): { hook: IncomingWebhook; secret: string } {
  const secret = randomBase62(SECRET_CHARS);
  const hook: IncomingWebhook = {
    id: newId(),
    team_id: channel.team_id,
    channel_id: channel.id,
    bot_id: bot.id,
    bot_name: bot.name,
    name,
    hash: sha256Hex(secret),
    created_at: nowIso(),
    revoked_at: null,
  };
  return { hook, secret };
}

/** The audit entry of what `actor` did to a hook. */
export const hookAudit = (
  hook: IncomingWebhook,
  { action, actor }: { action: AuditAction; actor: Actor },
): AuditDraft => ({
  team_id: hook.team_id,
  action,
  ...auditActor(actor),
  target_id: hook.id,
  target_name: hook.name,
});

/** Revokes a hook: its URL answers 404 from the very next request, in every process. */
export function revokeIncomingById(
  ctx: Ctx,
  id: string,
  actor: Actor,
): Promise<IncomingWebhook> {
  return retrying("revoke incoming webhook", async () => {
    const entry = await hookById(ctx, id, actor);
    if (entry.value.revoked_at) {
      throw invalid("id", "The incoming webhook is already revoked.");
    }
    return await replaceIncoming(ctx.kv, entry, {
      next: { ...entry.value, revoked_at: nowIso() },
      audit: hookAudit(entry.value, { action: "incoming_webhook.revoked", actor }),
    });
  });
}

/** A hook by id that the actor administers; else the same 404 as for one that doesn't exist. */
async function hookById(
  ctx: Ctx,
  id: string,
  actor: Actor,
): Promise<Deno.KvEntry<IncomingWebhook>> {
  const stored = storedId(id);
  const entry = stored ? await getIncomingById(ctx.kv, stored) : null;
  if (!entry) throw hookNotFound();
  authorize(actor, "team.administer", entry.value, HOOK_NOT_FOUND);
  return entry;
}

/** Gives a verifying hook a new secret, shown this once; the old one verifies for 24 hours. */
export function rotateVerifySecret(
  ctx: Ctx,
  id: string,
  actor: Actor,
): Promise<{ hook: IncomingWebhook; secret: string }> {
  return retrying("rotate incoming verify secret", async () => {
    const entry = await hookById(ctx, id, actor);
    const verify = entry.value.verify;
    if (!verify) {
      throw invalid("id", "This incoming webhook checks no signature: nothing to rotate.");
    }
    if (entry.value.revoked_at) throw invalid("id", "The incoming webhook is revoked.");
    const secret = mintVerifySecret(verify.scheme);
    const hook: IncomingWebhook = {
      ...entry.value,
      verify: {
        ...verify,
        secret: await ctx.keyring.encrypt(secret),
        previous_secret: verify.secret,
        previous_expires_at: new Date(Date.now() + ROTATION_OVERLAP_MS).toISOString(),
      },
    };
    const rotated = await replaceIncoming(ctx.kv, entry, {
      next: hook,
      audit: hookAudit(hook, { action: "incoming_webhook.verify_secret_rotated", actor }),
    });
    return rotated && { hook: rotated, secret };
  });
}

export const listIncoming = (ctx: Ctx, teamId: string) => listTeamIncoming(ctx.kv, teamId);

/**
 * The live hook a secret names, or the 404. The secret is hashed and the hash looked up, always,
 * so how long this takes says nothing about how much of a secret was right.
 */
export async function hookFor(ctx: Ctx, secret: string): Promise<IncomingWebhook> {
  const hook = await getIncomingByHash(ctx.kv, sha256Hex(secret));
  if (!hook || hook.revoked_at) throw hookNotFound();
  return hook;
}

/**
 * Posts a `standard` message as the hook's bot, exactly as the bot's token would through the API
 * (with its `message.created` event in the same commit): a bot no longer in the channel gets the
 * channel's 404, an archived channel the 403. `text` is the body; its errors are on `text`.
 */
export async function postThroughHook(
  ctx: Ctx,
  hook: IncomingWebhook,
  payload: Settled<{ text: string; blocks?: unknown; attachments?: unknown }>,
  once?: Once,
): Promise<Message> {
  const subject: Subject = {
    user_id: hook.bot_id,
    team_id: hook.team_id,
    name: hook.bot_name,
    type: "bot",
    role: null,
    token_id: hook.id,
    scopes: ["messages:write"],
  };
  const input = payload.ok
    ? {
      ok: true as const,
      value: {
        body: payload.value.text,
        blocks: supportedBlocks(payload.value.blocks),
        attachments: supportedAttachments(payload.value.attachments),
      },
    }
    : payload;
  try {
    return (await postMessageWith(ctx, subject, {
      channelId: hook.channel_id,
      input,
      bodyField: "text",
      once,
    })).message;
  } catch (e) {
    // The channel is gone, or the bot was taken out of it: the hook reaches nothing.
    if (e instanceof ApiError && e.status === 404) throw new BotLeftChannel();
    throw e;
  }
}
