/**
 * Incoming webhooks that check who sends: a hook made with `verify` takes only posts signed with
 * its secret as its sender signs (incoming_verify.ts), fresh, and a sender's delivery once.
 * Refusals answer 401, post nothing and are audited; the secret is shown once and rotatable
 * (incoming.ts).
 */
import type { Ctx } from "../context.ts";
import type {
  IncomingVerification,
  IncomingWebhook,
  VerifyScheme,
} from "../../core/incoming_records.ts";
import { ApiError } from "../../core/errors.ts";
import { addAudit } from "../../kv/audit.ts";
import { keys } from "../../kv/keys.ts";
import type { Once } from "../messages/post_guards.ts";
import { checkSignature, mintVerifySecret, type SignedPost } from "./incoming_verify.ts";

/** A new hook's verification, sealed, and its secret to show once; none for `none`. */
export async function newVerification(
  ctx: Ctx,
  scheme: VerifyScheme | undefined,
): Promise<{ verify?: IncomingVerification; secret?: string }> {
  if (!scheme || scheme === "none") return {};
  const secret = mintVerifySecret(scheme);
  const sealed = await ctx.keyring.encrypt(secret);
  return {
    verify: { scheme, secret: sealed, previous_secret: null, previous_expires_at: null },
    secret,
  };
}

/** Beyond a delivery id's tolerance, for the clock's step between checking and committing. */
const REMEMBER_MARGIN_MS = 1_000;

/**
 * Checks who sent `post` to `hook`: nothing for a hook without `verify`; else the delivery to
 * post once (a sender's id, where its scheme has one), or a 401 with its audit entry.
 */
export async function verifySender(
  ctx: Ctx,
  hook: IncomingWebhook,
  post: SignedPost,
): Promise<Once | undefined> {
  const verify = hook.verify;
  if (!verify) return undefined;
  const verdict = checkSignature(verify.scheme, post, await secretsOf(ctx, verify, post.nowMs));
  if ("refused" in verdict) {
    const op = ctx.kv.atomic();
    addAudit(op, {
      team_id: hook.team_id,
      action: "incoming_webhook.signature_refused",
      actor_id: null,
      actor_name: "an unverified sender",
      target_id: hook.id,
      target_name: hook.name,
    });
    await op.commit();
    throw new ApiError(401, verdict.refused);
  }
  if (!verdict.deliveryId) return undefined;
  // Remembered while its timestamp could still be accepted: one signed minutes ahead of this
  // clock stays acceptable that much longer than one signed now.
  return {
    key: keys.incomingSeen(hook.id, verdict.deliveryId.slice(0, 200)),
    forMs: Math.max(verdict.acceptableUntilMs - post.nowMs, 0) + REMEMBER_MARGIN_MS,
  };
}

/** The secrets a post may be signed with now: the current one, and one rotated out lately. */
async function secretsOf(ctx: Ctx, v: IncomingVerification, nowMs: number) {
  const current = await ctx.keyring.decrypt(v.secret);
  const previousLive = v.previous_secret && Date.parse(v.previous_expires_at ?? "") > nowMs;
  return previousLive ? [current, await ctx.keyring.decrypt(v.previous_secret!)] : [current];
}
