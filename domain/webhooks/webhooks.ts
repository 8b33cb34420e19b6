import type { Ctx } from "../context.ts";
import type { EventType, Subject } from "../../core/types.ts";
import type { Delivery, SignatureScheme, Subscription } from "../../core/webhook_records.ts";
import { visibleChannelIds } from "../channels/access.ts";
import { ApiError, invalid, notFound } from "../../core/errors.ts";
import { newId, nowIso, storedId } from "../../core/ids.ts";
import { retrying } from "../../core/retry.ts";
import { type Settled, unwrap } from "../../core/settled.ts";
import { authorize, permits, SUBSCRIPTION_NOT_FOUND } from "../policy.ts";
import { auditActor } from "../principals.ts";
import { checkName } from "../text.ts";
import { randomBase62 } from "../../core/random.ts";
import { recentDeliveries } from "../../kv/outbox/deliveries.ts";
import { keys } from "../../kv/keys.ts";
import { routesAt, type RouteTable } from "../../kv/routes.ts";
import {
  deleteAll,
  dropPending,
  getSubscription,
  insertSubscription,
  listTeamSubscriptions,
  removeSubscription,
  replaceSubscription,
} from "../../kv/webhooks.ts";
import { resolveTarget, UnsafeUrlError } from "../../core/url_safety.ts";

/** Channels one subscription may name (decisions: at most 100). */
export const MAX_CHANNEL_IDS = 100;
/** Attempts returned with a subscription. */
export const SHOWN_DELIVERIES = 20;

export interface NewWebhook {
  name: string;
  url: string;
  events: EventType[];
  channel_ids?: string[] | null;
  /** `service` when not given. */
  signature_scheme?: SignatureScheme;
}

/** `whsec_` and 32 random base62 characters; the whole string is the HMAC key. */
export const mintSigningSecret = (): string => `whsec_${randomBase62(32)}`;

const subscriptionNotFound = () => notFound(SUBSCRIPTION_NOT_FOUND);

/** Refuses a URL that is not http(s) or does not resolve to public addresses only (422). */
async function checkUrl(ctx: Ctx, url: string): Promise<void> {
  try {
    await resolveTarget(url, { allowPrivate: ctx.settings.webhooks.allowPrivateUrls });
  } catch (e) {
    if (e instanceof UnsafeUrlError) throw invalid("url", e.message);
    throw e;
  }
}

/**
 * Every channel id must name a channel the subject can see: one it can't see is refused exactly
 * like one that does not exist, so a subscription can't reveal a channel (422 either way).
 */
async function checkChannels(ctx: Ctx, subject: Subject, ids: string[]): Promise<void> {
  const visible = await visibleChannelIds(ctx, subject, ids);
  if (ids.some((id) => !visible.has(id))) {
    throw invalid("channel_ids", "Every channel id must name a channel of this workspace.");
  }
}

/** The fields PATCH may change; those given are checked with the rules of creation. */
export type WebhookChanges = Partial<NewWebhook>;

/** What a subscription hears and where it delivers: its owner's choice alone. */
const RETARGETING: readonly string[] = ["url", "events", "channel_ids"];

/**
 * Changes a subscription's name, url, events, channels and signature scheme with the rules of
 * creation (a new url is checked for safety, channels must be ones the subject can see), keeping
 * its secret, its delivery history and its status. `asked` names the fields the request gave:
 * asking to change `url`, `events` or `channel_ids` needs the policy's "subscription.retarget"
 * (the owner; 403 otherwise), anything else "subscription.manage". Their values' errors (422)
 * come after that.
 */
export async function updateWebhook(
  ctx: Ctx,
  subject: Subject,
  id: string,
  { input, asked }: { input: Settled<WebhookChanges>; asked: string[] },
): Promise<Subscription> {
  const action = asked.some((f) => RETARGETING.includes(f))
    ? "subscription.retarget"
    : "subscription.manage";
  const loaded = await loadWebhook(ctx, subject, id, action);
  const changes = unwrap(input);
  const given = Object.entries(changes).filter(([, v]) => v !== undefined);
  if (given.length === 0) return loaded.value;
  if (changes.name !== undefined) checkName("name", changes.name);
  const channelIds = changes.channel_ids === undefined
    ? undefined
    : changes.channel_ids && [...new Set(changes.channel_ids)];
  if (channelIds) await checkChannels(ctx, subject, channelIds);
  if (changes.url !== undefined) await checkUrl(ctx, changes.url);
  return await retrying("update webhook", async () => {
    const entry = await loadWebhook(ctx, subject, id, action);
    const next: Subscription = {
      ...entry.value,
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.url !== undefined ? { url: changes.url } : {}),
      ...(changes.events !== undefined ? { events: [...new Set(changes.events)] } : {}),
      ...(channelIds !== undefined ? { channel_ids: channelIds } : {}),
      ...(changes.signature_scheme !== undefined
        ? { signature_scheme: changes.signature_scheme }
        : {}),
    };
    const ok = await replaceSubscription(ctx.kv, entry, {
      next,
      action: "webhook.updated",
      by: auditActor(subject),
    });
    return ok ? next : null;
  });
}

/** Creates an active subscription in the subject's team; the secret is returned this once. */
export async function createWebhook(
  ctx: Ctx,
  subject: Subject,
  input: NewWebhook,
): Promise<{ subscription: Subscription; secret: string }> {
  checkName("name", input.name);
  const channelIds = input.channel_ids ? [...new Set(input.channel_ids)] : null;
  if (channelIds) await checkChannels(ctx, subject, channelIds);
  await checkUrl(ctx, input.url);
  const secret = mintSigningSecret();
  const subscription: Subscription = {
    id: newId(),
    team_id: subject.team_id,
    name: input.name,
    url: input.url,
    events: [...new Set(input.events)],
    channel_ids: channelIds,
    signature_scheme: input.signature_scheme ?? "service",
    status: "active",
    consecutive_failures: 0,
    last_success_at: null,
    disabled_at: null,
    created_at: nowIso(),
    created_by: subject.user_id,
    owner_type: subject.type,
    secret: await ctx.keyring.encrypt(secret),
    previous_secret: null,
    previous_secret_expires_at: null,
  };
  return await retrying("create webhook", async () => {
    const version = await ctx.kv.get(keys.routesVersion(subject.team_id));
    assertRoom(await routesAt(ctx.kv, subject.team_id, version), subject);
    const ok = await insertSubscription(ctx.kv, subscription, version, {
      team_id: subject.team_id,
      action: "webhook.created",
      ...auditActor(subject),
      target_id: subscription.id,
      target_name: subscription.name,
    });
    return ok ? { subscription, secret } : null;
  });
}

/**
 * Subscriptions a team, and one user of it, may have. Every event's commit writes a delivery job
 * per matching subscription (two mutations each, and a member joining fires two events), so
 * without a bound one member's subscriptions could push every commit of the team past KV's 1,000
 * mutations and stop all posting.
 */
export const MAX_TEAM_SUBSCRIPTIONS = 100;
export const MAX_OWN_SUBSCRIPTIONS = 25;

function assertRoom(all: RouteTable, subject: Subject): void {
  // Apps' listeners are bounded by their installs, not by these counts.
  const routes = all.filter((r) => !r.route.app);
  const tooMany = (message: string) => new ApiError(422, message, { request: [message] });
  if (routes.length >= MAX_TEAM_SUBSCRIPTIONS) {
    throw tooMany(
      `This team has ${MAX_TEAM_SUBSCRIPTIONS} subscriptions, the most allowed; delete one first.`,
    );
  }
  const own = routes.filter((r) => r.route.owner?.id === subject.user_id).length;
  if (own >= MAX_OWN_SUBSCRIPTIONS) {
    throw tooMany(
      `You have ${MAX_OWN_SUBSCRIPTIONS} subscriptions, the most allowed; delete one first.`,
    );
  }
}

/** The subscriptions of the subject's team it may see (its own; an admin's, all), newest first. */
export async function listWebhooks(ctx: Ctx, subject: Subject): Promise<Subscription[]> {
  const all = await listTeamSubscriptions(ctx.kv, subject.team_id);
  return all.filter((s) => permits(subject, "subscription.read", s));
}

/** A team's subscriptions, newest first: for the operator's CLI. */
export const listTeamWebhooks = (ctx: Ctx, teamId: string) => listTeamSubscriptions(ctx.kv, teamId);

/**
 * A subscription the subject may take `action` on, or the policy's answer: 404 (unknown,
 * malformed, another team's, or one the subject may not see: all alike), or 403.
 */
export async function loadWebhook(
  ctx: Ctx,
  subject: Subject,
  id: string,
  action: "subscription.read" | "subscription.manage" | "subscription.retarget" =
    "subscription.read",
): Promise<Deno.KvEntry<Subscription>> {
  const stored = storedId(id);
  if (!stored) throw subscriptionNotFound();
  const entry = await getSubscription(ctx.kv, stored);
  if (entry.versionstamp === null) throw subscriptionNotFound();
  authorize(subject, action, entry.value);
  return entry;
}

/** A subscription with its most recent attempts, newest first. */
export async function showWebhook(
  ctx: Ctx,
  subject: Subject,
  id: string,
): Promise<{ subscription: Subscription; deliveries: Delivery[] }> {
  const { value } = await loadWebhook(ctx, subject, id);
  return {
    subscription: value,
    deliveries: await recentDeliveries(ctx.kv, value.id, SHOWN_DELIVERIES),
  };
}

/**
 * Deletes a subscription: nothing more is attempted, pending jobs, records and their counts are
 * removed. A recording commit still in flight checks the subscription, so it writes none again.
 */
export async function deleteWebhook(ctx: Ctx, subject: Subject, id: string): Promise<void> {
  const removed = await retrying("delete webhook", async () => {
    const entry = await loadWebhook(ctx, subject, id, "subscription.manage");
    const ok = await removeSubscription(ctx.kv, entry, auditActor(subject));
    return ok ? entry.value : null;
  });
  await dropPending(ctx.kv, removed.id);
  await deleteAll(ctx.kv, keys.deliveries(removed.id));
  await deleteAll(ctx.kv, keys.deliverySlots(removed.id));
  await deleteAll(ctx.kv, keys.deliveryCounts(removed.id));
  await deleteAll(ctx.kv, keys.jobCounts(removed.id));
}
