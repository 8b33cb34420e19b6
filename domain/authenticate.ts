import type { Ctx } from "./context.ts";
import { unauthenticated } from "../core/errors.ts";
import { sha256Hex } from "../core/random.ts";
import { CacheKind } from "../core/memory.ts";
import type { Subject, Token, TokenCheck } from "../core/types.ts";
import { keys } from "../kv/keys.ts";
import { getTokenByHash, touchToken } from "../kv/tokens.ts";
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

const subjectOf = (token: Token, check?: TokenCheck): Subject => ({
  user_id: token.user_id,
  team_id: token.team_id,
  name: token.user_name,
  type: token.user_type,
  role: token.role,
  token_id: token.id,
  token_hash: token.hash,
  scopes: token.scopes,
  ...(check ? { token_check: check } : {}),
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

/**
 * Tokens seen before, by hash. What never changes on a token (its user, team, scopes, expiry)
 * is taken from here; whether it is still unrevoked, and its user's role, are not: see
 * `TokenCheck`.
 */
const TOKENS = new CacheKind<Token>("tokens", 10_000);

/**
 * `authenticate` without its read when the token was seen before: the subject then carries a
 * pending `token_check`, which the request settles by reading the token's entry in the same
 * `getMany` as its first resource (see `settleTokenCheck`), or with `verifySubject` before
 * anything is written or answered. A revocation made by any process is still seen at once.
 */
export async function identify(ctx: Ctx, value: string | undefined): Promise<Subject> {
  const hash = hashOfWellFormed(value);
  const now = Date.now();
  const known = ctx.kv.cache(TOKENS);
  const cached = known.get(hash);
  if (cached) {
    touch(ctx, assertLive(cached, now), now);
    return subjectOf(cached, { key: keys.token(hash), settled: false });
  }
  const token = assertLive(await getTokenByHash(ctx.kv, hash), now);
  known.set(token.hash, token);
  touch(ctx, token, now);
  return subjectOf(token);
}

/**
 * Settles a pending check with the token's entry as read; throws 401 if it no longer holds. An
 * entry remembered rather than read (kv/checked_reads.ts) is not `current`: it may refuse, but
 * the check stays pending, so that a fresh attempt reads the token again.
 */
export function settleTokenCheck(
  ctx: Ctx,
  subject: Subject,
  entry: Deno.KvEntryMaybe<unknown>,
  current = true,
): void {
  const check = subject.token_check;
  if (!check || check.settled) return;
  const hash = check.key[1] as string;
  const known = ctx.kv.cache(TOKENS);
  let token: Token;
  try {
    token = assertLive(entry.value as Token | null);
  } catch (e) {
    known.delete(hash);
    throw e;
  }
  // A role change rewrites the role the token carries: the request acts with the new one.
  if (token.role !== subject.role) {
    subject.role = token.role;
    known.set(hash, token);
  }
  check.settled = current;
}

/** Settles the subject's pending token check, if any, with a read of its own. */
export async function verifySubject(ctx: Ctx, subject: Subject): Promise<void> {
  if (subject.token_check && !subject.token_check.settled) {
    settleTokenCheck(ctx, subject, await ctx.kv.get(subject.token_check.key));
  }
}

/** The key of a pending token check, to read along with a request's first resource. */
export const pendingTokenKey = (subject: Subject): Deno.KvKey | null =>
  subject.token_check && !subject.token_check.settled ? subject.token_check.key : null;
