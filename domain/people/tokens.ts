import type { Ctx } from "../context.ts";
import { isActive } from "../../core/active.ts";
import {
  getTokenById,
  insertToken,
  listUserTokens,
  replaceToken,
  revokeToken,
  userTokens,
} from "../../kv/tokens.ts";
import { ApiError, invalid, notFound } from "../../core/errors.ts";
import { newId, nowIso, storedId } from "../../core/ids.ts";
import { authorize } from "../policy.ts";
import { type Actor, auditActor } from "../principals.ts";
import { checkName } from "../text.ts";
import { retrying } from "../../core/retry.ts";
import type { Scope, Token, User } from "../../core/types.ts";
import { sha256Hex } from "../../core/random.ts";
import { getUser } from "../../kv/workspace.ts";
import { getUserEntry } from "../../kv/people.ts";
import { isTokenLive, mintTokenValue } from "./token_format.ts";

export interface NewToken {
  token: Token;
  /** The only time the value exists outside the caller's hands. */
  value: string;
}

/** A new token for `user`, with its value: what a creation commits (and an install, in its plan). */
export function mintToken(
  user: User,
  scopes: Scope[],
  name: string,
  expiresInSeconds: number | null,
): NewToken {
  const kind = user.type === "bot" ? "bot" : "personal";
  const value = mintTokenValue(kind);
  const now = Date.now();
  return {
    value,
    token: {
      id: newId(now),
      name,
      kind,
      hash: sha256Hex(value),
      user_id: user.id,
      team_id: user.team_id,
      user_name: user.name,
      user_type: user.type,
      role: user.role,
      scopes,
      created_at: new Date(now).toISOString(),
      expires_at: expiresInSeconds ? new Date(now + expiresInSeconds * 1000).toISOString() : null,
      revoked_at: null,
      last_used_at: null,
    },
  };
}

const noSuchToken = () => notFound("No such token.");

/**
 * Live tokens (unrevoked, unexpired) one user may hold: each has a rate limit of its own, so
 * without a bound one member could mint its way past the limit.
 */
export const MAX_LIVE_TOKENS = 25;

/** A token's name: the rule for names, 1 to 255 characters; none given is "token". */
const tokenName = (name: string | undefined) => checkName("name", (name ?? "").trim()) || "token";

/**
 * The user `userId` names, whose tokens the actor may manage (the policy's "token.create"); else
 * the 404 of `hiddenAs`, alike for an id that names nobody and one the actor may not act on.
 */
export async function tokenHolder(
  ctx: Ctx,
  userId: string,
  actor: Actor,
  hiddenAs: string,
): Promise<User> {
  const stored = storedId(userId);
  const user = stored ? await getUser(ctx.kv, stored) : null;
  if (!user) throw notFound(hiddenAs);
  authorize(actor, "token.create", user, hiddenAs);
  return user;
}

/**
 * Creates a token for `user`, whose tokens the actor must manage (the policy's "token.create";
 * else 404). At least one scope (422 on `scopes`). The user is read again for the commit, which
 * checks it: a token minted while its user is deactivated or given another role never lands with
 * what the user was before.
 */
export async function createToken(
  ctx: Ctx,
  user: User,
  opts: {
    scopes: Scope[];
    name?: string;
    expiresInSeconds?: number | null;
    actor: Actor;
  },
): Promise<NewToken> {
  const usable = (u: User) => {
    authorize(opts.actor, "token.create", u);
    if (!isActive(u)) {
      throw invalid("user", "The user is deactivated; reactivate it before giving it a token.");
    }
    if (u.system) throw invalid("user", "The Integrations bot is never given a token.");
  };
  usable(user);
  const name = tokenName(opts.name);
  if (opts.scopes.length === 0) throw invalid("scopes", "Choose at least one scope.");
  return await retrying("create token", async () => {
    const holder = await getUserEntry(ctx.kv, user.id);
    if (!holder.value) throw notFound("No such user.");
    usable(holder.value);
    const { tokens, version } = await userTokens(ctx.kv, user.id);
    const now = Date.now();
    if (tokens.filter((t) => isTokenLive(t, now)).length >= MAX_LIVE_TOKENS) {
      const who = opts.actor?.user_id === user.id ? "You hold" : `${holder.value.name} holds`;
      throw new ApiError(
        422,
        `${who} ${MAX_LIVE_TOKENS} live tokens already, the most allowed; revoke one first.`,
      );
    }
    const made = mintToken(holder.value, opts.scopes, name, opts.expiresInSeconds ?? null);
    const ok = await insertToken(ctx.kv, {
      token: made.token,
      holder,
      version,
      audit: {
        team_id: user.team_id,
        action: "token.created",
        ...auditActor(opts.actor),
        target_id: made.token.id,
        target_name: auditName(made.token),
      },
    });
    return ok ? made : null;
  });
}

/** A token as the audit log names it: whose, and what it is called. */
const auditName = (t: Token) => `${t.user_name}'s token “${t.name}”`;

const holderOf = (t: Token) => ({ id: t.user_id, team_id: t.team_id, type: t.user_type });

/** An unrevoked token the actor may manage, or the 404 (its existence is not told). */
async function liveToken(ctx: Ctx, id: string, actor: Actor): Promise<Deno.KvEntry<Token>> {
  const stored = storedId(id);
  const entry = stored ? await getTokenById(ctx.kv, stored) : null;
  if (!entry) throw noSuchToken();
  authorize(actor, "token.manage", holderOf(entry.value));
  if (entry.value.revoked_at) throw invalid("id", "The token is already revoked.");
  return entry;
}

export function revokeTokenById(ctx: Ctx, id: string, actor: Actor): Promise<Token> {
  return retrying("revoke token", async () => {
    const entry = await liveToken(ctx, id, actor);
    return await revokeToken(ctx.kv, entry, nowIso(), {
      team_id: entry.value.team_id,
      action: "token.revoked",
      ...auditActor(actor),
      target_id: entry.value.id,
      target_name: auditName(entry.value),
    });
  });
}

export const listTokens = (ctx: Ctx, userId: string) => listUserTokens(ctx.kv, userId);

/** Issues a new value (and id) with the same grants, and revokes the old token at once. */
export function rotateTokenById(
  ctx: Ctx,
  id: string,
  actor: Actor,
): Promise<NewToken> {
  return retrying("rotate token", async () => {
    const entry = await liveToken(ctx, id, actor);
    const old = entry.value;
    // A rotation keeps what remains of a token's life: an expired one has none left to keep.
    if (!isTokenLive(old, Date.now())) {
      throw invalid("id", "The token has expired; create a new one instead.");
    }
    const remaining = old.expires_at
      ? Math.max(1, Math.ceil((Date.parse(old.expires_at) - Date.now()) / 1000))
      : null;
    const made = mintToken(
      {
        id: old.user_id,
        team_id: old.team_id,
        name: old.user_name,
        type: old.user_type,
        role: old.role,
        created_at: old.created_at,
      },
      old.scopes,
      old.name,
      remaining,
    );
    const replaced = await replaceToken(ctx.kv, entry, made.token, {
      team_id: old.team_id,
      action: "token.rotated",
      ...auditActor(actor),
      target_id: old.id,
      target_name: auditName(old),
    });
    return replaced ? made : null;
  });
}
