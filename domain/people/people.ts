/**
 * People leave and roles change (decisions.md, "Authority over time"). Deactivating a user
 * revokes its tokens (so every instance answers 401 on the next request and ends its streams),
 * ends its sessions and sign-in links (read against the user each time), disables its
 * subscriptions and, for a bot, revokes its incoming webhooks; its messages, reactions and
 * memberships stay. A role change rewrites the role its tokens carry in the same commit, so the
 * next request anywhere acts with the new one. The policy decides who may do either.
 */
import type { Ctx } from "../context.ts";
import { isActive } from "../../core/active.ts";
import { invalid, notFound, unlessAlreadyDone } from "../../core/errors.ts";
import { nowIso, storedId } from "../../core/ids.ts";
import { retrying } from "../../core/retry.ts";
import type { AuditAction, Role, Token, User } from "../../core/types.ts";
import type { AuditDraft } from "../../kv/audit.ts";
import type { Subscription } from "../../core/webhook_records.ts";
import { listTeamIncoming } from "../../kv/incoming.ts";
import { revokeIncomingById } from "../webhooks/incoming.ts";
import { getUserEntry, replaceUser } from "../../kv/people.ts";
import { userTokens } from "../../kv/tokens.ts";
import { getSubscription, listTeamSubscriptions, replaceSubscription } from "../../kv/webhooks.ts";
import { listTeamUsers } from "../../kv/workspace.ts";
import { authorize } from "../policy.ts";
import { type Actor, auditActor } from "../principals.ts";
import { isTokenLive } from "./token_format.ts";

const noSuchUser = () => notFound("No such user.");

/** The audit entry of a change to `user` by `actor`, naming the user (or `name`). */
const audit = (user: User, action: AuditAction, actor: Actor, name = user.name): AuditDraft => ({
  team_id: user.team_id,
  action,
  ...auditActor(actor),
  target_id: user.id,
  target_name: name,
});

async function userEntry(ctx: Ctx, id: string): Promise<Deno.KvEntry<User>> {
  const stored = storedId(id);
  const entry = stored ? await getUserEntry(ctx.kv, stored) : null;
  if (!entry || entry.versionstamp === null) throw noSuchUser();
  return entry as Deno.KvEntry<User>;
}

/**
 * Refuses a change that would leave the team without an active owner. For an active owner, the
 * entry of another active owner the change counts on: the commit checks it, so two owners
 * demoting or deactivating each other at once can't both land (each one's witness is the other,
 * or one whose own change would fail), however their commits race.
 */
async function keepAnOwner(
  ctx: Ctx,
  user: User,
  what: string,
): Promise<Deno.KvEntry<User> | null> {
  if (user.role !== "owner" || !isActive(user)) return null;
  const others = (await listTeamUsers(ctx.kv, user.team_id))
    .filter((u) => u.id !== user.id && u.role === "owner" && isActive(u));
  for (const other of others) {
    const entry = await getUserEntry(ctx.kv, other.id);
    if (entry.value?.role === "owner" && isActive(entry.value)) {
      return entry as Deno.KvEntry<User>;
    }
  }
  throw invalid("id", `This is the team's last active owner: it can't be ${what}.`);
}

/**
 * Rewrites the user read as `entry` to `next`, with `rewrite` applied to its live tokens, in one
 * commit that checks the user, its tokens as read and the `witness` owner; null when any moved.
 */
async function replaceWithTokens(
  ctx: Ctx,
  { entry, next, rewrite, witness, audit }: {
    entry: Deno.KvEntry<User>;
    next: User;
    rewrite: (t: Token) => Token;
    witness: Deno.KvEntry<User> | null;
    audit: AuditDraft;
  },
): Promise<boolean> {
  const { tokens, version } = await userTokens(ctx.kv, next.id);
  const live = tokens.filter((t) => isTokenLive(t, Date.now())).map(rewrite);
  return await replaceUser(ctx.kv, {
    entry,
    next,
    tokens: live,
    tokensVersion: version,
    witness,
    audit,
  });
}

/** Deactivates a user and takes back what acted for it; deactivating one again changes nothing. */
export async function deactivateUser(ctx: Ctx, actor: Actor, id: string): Promise<User> {
  const user = await retrying("deactivate user", async () => {
    const entry = await userEntry(ctx, id);
    authorize(actor, "user.deactivate", entry.value);
    if (!isActive(entry.value)) return entry.value;
    const witness = await keepAnOwner(ctx, entry.value, "deactivated");
    const now = nowIso();
    const next: User = { ...entry.value, deactivated_at: now, signed_out_at: now };
    const done = await replaceWithTokens(ctx, {
      entry,
      next,
      rewrite: (t) => ({ ...t, revoked_at: now }),
      witness,
      audit: audit(next, "user.deactivated", actor),
    });
    return done ? next : null;
  });
  await disableSubscriptionsOf(ctx, actor, user);
  if (user.type === "bot") await revokeHooksOf(ctx, actor, user);
  return user;
}

/**
 * Lets a user sign in and be given tokens again; its old tokens and subscriptions stay off, and
 * so do its sessions and sign-in links from before (`signed_out_at` stays).
 */
export async function reactivateUser(ctx: Ctx, actor: Actor, id: string): Promise<User> {
  return await retrying("reactivate user", async () => {
    const entry = await userEntry(ctx, id);
    authorize(actor, "user.deactivate", entry.value);
    if (isActive(entry.value)) return entry.value;
    const next: User = { ...entry.value, deactivated_at: null };
    const done = await replaceWithTokens(ctx, {
      entry,
      next,
      rewrite: (t) => t,
      witness: null,
      audit: audit(next, "user.reactivated", actor),
    });
    return done ? next : null;
  });
}

/** Gives a human another role; its tokens carry it from the same commit on. */
export async function changeRole(
  ctx: Ctx,
  actor: Actor,
  id: string,
  role: Role,
): Promise<{ user: User; previous: Role }> {
  return await retrying("change role", async () => {
    const entry = await userEntry(ctx, id);
    authorize(actor, "user.role", entry.value);
    const previous = entry.value.role;
    if (entry.value.type !== "human" || previous === null) {
      throw invalid("id", "A bot has no role.");
    }
    if (previous === role) return { user: entry.value, previous };
    const witness = previous === "owner" ? await keepAnOwner(ctx, entry.value, "demoted") : null;
    const next: User = { ...entry.value, role };
    const done = await replaceWithTokens(ctx, {
      entry,
      next,
      rewrite: (t) => ({ ...t, role }),
      witness,
      audit: audit(next, "user.role_changed", actor, `${next.name}: ${previous} → ${role}`),
    });
    return done ? { user: next, previous } : null;
  });
}

/** Disables the active subscriptions a deactivated user owns, each with its audit entry. */
async function disableSubscriptionsOf(ctx: Ctx, actor: Actor, user: User) {
  const owned = (await listTeamSubscriptions(ctx.kv, user.team_id))
    .filter((s) => s.created_by === user.id && s.status === "active");
  for (const { id } of owned) {
    await retrying("disable webhook", async () => {
      const entry = await getSubscription(ctx.kv, id);
      if (entry.versionstamp === null || entry.value.status !== "active") return true;
      const next: Subscription = { ...entry.value, status: "disabled", disabled_at: nowIso() };
      return await replaceSubscription(ctx.kv, entry, {
          next,
          action: "webhook.disabled",
          by: auditActor(actor),
        })
        ? true
        : null;
    });
  }
}

/** Revokes a deactivated bot's incoming webhooks: their URLs answer 404 from then on. */
async function revokeHooksOf(ctx: Ctx, actor: Actor, bot: User) {
  const hooks = (await listTeamIncoming(ctx.kv, bot.team_id))
    .filter((h) => h.bot_id === bot.id && !h.revoked_at);
  for (const { id } of hooks) {
    await revokeIncomingById(ctx, id, actor).catch(unlessAlreadyDone);
  }
}
