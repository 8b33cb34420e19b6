import type { Ctx } from "../context.ts";
import { unauthenticated } from "../../core/errors.ts";
import { sha256Hex } from "../../core/random.ts";
import { CacheKind } from "../../core/memory.ts";
import type { Subject, Token } from "../../core/types.ts";
import { getTokenByHash, touchToken } from "../../kv/tokens.ts";
import { isTokenLive, isWellFormedToken } from "./token_format.ts";

const TOUCH_EVERY_MS = 60_000;
/** When this process last recorded each token's use. */
const TOUCHED = new CacheKind<number>("token uses", 10_000);

/** Throws the 401 unless the token exists, is unrevoked and unexpired. */
function assertLive(token: Token | null | undefined, now = Date.now()): Token {
  if (!isTokenLive(token, now)) {
    throw unauthenticated("The token is invalid, revoked or expired.");
  }
  return token;
}

function touch(ctx: Ctx, token: Token, now: number) {
  const lastTouched = ctx.kv.cache(TOUCHED);
  if ((lastTouched.get(token.id) ?? 0) + TOUCH_EVERY_MS > now) return;
  lastTouched.set(token.id, now);
  touchToken(ctx.kv, token.hash, new Date(now).toISOString())
    .catch(() => lastTouched.delete(token.id));
}

const subjectOf = (token: Token): Subject => ({
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
  const token = assertLive(await getTokenByHash(ctx.kv, hash));
  touch(ctx, token, Date.now());
  return subjectOf(token);
}

function hashOfWellFormed(value: string | undefined): string {
  if (!value || !isWellFormedToken(value)) {
    throw unauthenticated("Missing or malformed bearer token.");
  }
  return sha256Hex(value);
}
