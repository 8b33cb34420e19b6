/**
 * What the settings screen and the operator's CLI do to a subscription besides the API: re-enable
 * it, rotate its signing secret, choose how it is signed. The policy's "subscription.manage"
 * decides who may.
 */
import { mintSigningSecret } from "./webhooks.ts";
import type { Ctx } from "../context.ts";
import type { SignatureScheme, Subscription } from "../../core/webhook_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { storedId } from "../../core/ids.ts";
import { retrying } from "../../core/retry.ts";
import { authorize, SUBSCRIPTION_NOT_FOUND } from "../policy.ts";
import { type Actor, auditActor } from "../principals.ts";
import { getSubscription, replaceSubscription } from "../../kv/webhooks.ts";

const subscriptionNotFound = () => notFound(SUBSCRIPTION_NOT_FOUND);

/** After a rotation, deliveries are signed with the old secret too for this long. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
/** A subscription by id that the actor manages (the policy), for the admin CLI and the screen. */
async function webhookById(
  ctx: Ctx,
  id: string,
  actor: Actor,
): Promise<Deno.KvEntry<Subscription>> {
  const stored = storedId(id);
  const entry = stored ? await getSubscription(ctx.kv, stored) : null;
  if (!entry || entry.versionstamp === null) throw subscriptionNotFound();
  authorize(actor, "subscription.manage", entry.value);
  return entry;
}

/** Re-enables a disabled subscription with a cleared failure streak. */
export async function enableWebhook(
  ctx: Ctx,
  id: string,
  actor: Actor,
): Promise<Subscription> {
  return await retrying("enable webhook", async () => {
    const entry = await webhookById(ctx, id, actor);
    if (entry.value.status === "active") throw invalid("id", "The subscription is already active.");
    const next: Subscription = {
      ...entry.value,
      status: "active",
      consecutive_failures: 0,
      disabled_at: null,
    };
    const ok = await replaceSubscription(ctx.kv, entry, {
      next,
      action: "webhook.enabled",
      by: auditActor(actor),
    });
    return ok ? next : null;
  });
}

/**
 * Gives a subscription a new signing secret. For ROTATION_OVERLAP_MS deliveries carry a second
 * signature made with the old one, so receivers can switch without losing deliveries.
 */
export async function rotateWebhookSecret(
  ctx: Ctx,
  id: string,
  actor: Actor,
): Promise<{ subscription: Subscription; secret: string }> {
  const secret = mintSigningSecret();
  const sealed = await ctx.keyring.encrypt(secret);
  const subscription = await retrying("rotate webhook secret", async () => {
    const entry = await webhookById(ctx, id, actor);
    const next: Subscription = {
      ...entry.value,
      secret: sealed,
      previous_secret: entry.value.secret,
      previous_secret_expires_at: new Date(Date.now() + ROTATION_OVERLAP_MS).toISOString(),
    };
    const ok = await replaceSubscription(ctx.kv, entry, {
      next,
      action: "webhook.secret_rotated",
      by: auditActor(actor),
    });
    return ok ? next : null;
  });
  return { subscription, secret };
}

/** Chooses how a subscription's next deliveries are signed (see SignatureScheme). */
export async function setSignatureScheme(
  ctx: Ctx,
  id: string,
  { scheme, actor }: { scheme: SignatureScheme; actor: Actor },
): Promise<Subscription> {
  return await retrying("set signature scheme", async () => {
    const entry = await webhookById(ctx, id, actor);
    const next: Subscription = { ...entry.value, signature_scheme: scheme };
    const ok = await replaceSubscription(ctx.kv, entry, {
      next,
      action: "webhook.updated",
      by: auditActor(actor),
    });
    return ok ? next : null;
  });
}
