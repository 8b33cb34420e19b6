import type { Ctx } from "../context.ts";
import { isActive } from "../../core/active.ts";
import { Unauthenticated } from "../../core/errors.ts";
import { getUser } from "../../kv/workspace.ts";
import { sha256Hex } from "../../core/random.ts";
import { CacheKind } from "../../core/memory.ts";
import type { Subject, Token } from "../../core/types.ts";
import { getTokenByHash, touchToken } from "../../kv/tokens.ts";
import { isTokenLive, isWellFormedToken } from "./token_format.ts";

const TOUCH_EVERY_MS = 60_000;
/** When this process last recorded each token's use. */
const TOUCHED = new CacheKind<number>("token uses", 10_000);

const MAKE_ONE = "make a new one (the settings screen, or deno task admin token:create)";

/**
 * The 401 for a token that isn't live, saying which: unknown, expired, revoked, or its user's
 * deactivated (a deactivation revokes its tokens, so a revoked one is read against its user).
 */
async function refusal(ctx: Ctx, token: Token | null): Promise<Unauthenticated> {
  if (!token) {
    return new Unauthenticated(
      "invalid",
      "The token is not known here: check that it was copied whole, and for this service.",
    );
  }
  if (token.revoked_at) {
    const user = await getUser(ctx.kv, token.user_id);
    if (user && !isActive(user)) {
      return new Unauthenticated("inactive", "The token's user is deactivated.");
    }
    return new Unauthenticated(
      "revoked",
      `The token was revoked at ${token.revoked_at}; ${MAKE_ONE}.`,
    );
  }
  return new Unauthenticated("expired", `The token expired at ${token.expires_at}; ${MAKE_ONE}.`);
}

function touch(ctx: Ctx, token: Token, now: number) {
  const lastTouched = ctx.kv.cache(TOUCHED);
  if ((lastTouched.get(token.id) ?? 0) + TOUCH_EVERY_MS > now) return;
  lastTouched.set(token.id, now);
  touchToken(ctx.kv, token.hash, new Date(now).toISOString())
    .catch(() => lastTouched.delete(token.id));
}

/** The subject a live token acts as. */
export const subjectOf = (token: Token): Subject => ({
  user_id: token.user_id,
  team_id: token.team_id,
  name: token.user_name,
  type: token.user_type,
  role: token.role,
  token_id: token.id,
  token_hash: token.hash,
  scopes: token.scopes,
});

/**
 * Resolves a bearer value to the subject it acts as with one KV read, or throws 401.
 * `last_used_at` is written at most once a minute per token, off the request's critical path.
 */
export async function authenticate(ctx: Ctx, value: string | undefined): Promise<Subject> {
  const hash = hashOfWellFormed(value);
  const token = await getTokenByHash(ctx.kv, hash);
  const now = Date.now();
  if (!isTokenLive(token, now)) throw await refusal(ctx, token);
  touch(ctx, token, now);
  return subjectOf(token);
}

function hashOfWellFormed(value: string | undefined): string {
  if (!value) {
    throw new Unauthenticated("missing", "Send a token: Authorization: Bearer <token>.");
  }
  if (!isWellFormedToken(value)) {
    throw new Unauthenticated(
      "invalid",
      "The token is malformed: tokens look like tcb_… (a bot's) or tcp_… (a person's), 42 characters; check that it was copied whole.",
    );
  }
  return sha256Hex(value);
}
