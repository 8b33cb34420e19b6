import { createHash } from "node:crypto";
import type { Ctx } from "./context.ts";
import {
  getTokenByHash,
  getTokenById,
  insertToken,
  listUserTokens,
  replaceToken,
  revokeToken,
  touchToken,
  userTokens,
} from "../kv/tokens.ts";
import { ApiError, invalid, notFound, unauthenticated } from "./errors.ts";
import { isUuid, newId, nowIso } from "./ids.ts";
import { type Actor, actorId, authorize, whoOf } from "./policy.ts";
import { checkName } from "./text.ts";
import { keys } from "../kv/keys.ts";
import { retrying } from "./retry.ts";
import type { Scope, Subject, Token, TokenCheck, User } from "./types.ts";
import { RecentMap } from "./recent_map.ts";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_CHARS = 32;
const CHECKSUM_CHARS = 6;
const PREFIX = { bot: "tcb_", personal: "tcp_" } as const;
const SHAPE = /^tc[bp]_[0-9A-Za-z]{38}$/;

/** Random base62 text; rejection sampling keeps every character equally likely. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of new TextEncoder().encode(text)) {
    crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function base62Fixed(n: number, width: number): string {
  let out = "";
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/**
 * A token value: `tcb_`/`tcp_`, 32 random base62 characters, then a 6-character CRC32 of
 * them, so secret scanners can tell a real token from look-alike text offline.
 */
export function mintTokenValue(kind: Token["kind"]): string {
  const random = randomBase62(RANDOM_CHARS);
  return `${PREFIX[kind]}${random}${base62Fixed(crc32(random), CHECKSUM_CHARS)}`;
}

/** True when `value` has a token's shape and a valid checksum: no store read needed. */
export function isWellFormedToken(value: string): boolean {
  if (!SHAPE.test(value)) return false;
  const random = value.slice(4, 4 + RANDOM_CHARS);
  return value.slice(4 + RANDOM_CHARS) === base62Fixed(crc32(random), CHECKSUM_CHARS);
}

/**
 * SHA-256, hex. Synchronous on purpose: every request hashes its bearer token, and Web Crypto's
 * digest hops to a worker thread and back, which measured as a third of the request's CPU.
 */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

export interface NewToken {
  token: Token;
  /** The only time the value exists outside the caller's hands. */
  value: string;
}

function build(
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

const isLive = (t: Token, now: number) =>
  !t.revoked_at && (!t.expires_at || Date.parse(t.expires_at) > now);

/** A token's name: the rule for names, 1 to 255 characters; none given is "token". */
const tokenName = (name: string | undefined) => checkName("name", (name ?? "").trim()) || "token";

/**
 * Creates a token for `user`, whose tokens the actor must manage (the policy's "token.create";
 * else 404). At least one scope (422 on `scopes`).
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
  authorize(whoOf(opts.actor), "token.create", user);
  const name = tokenName(opts.name);
  if (opts.scopes.length === 0) throw invalid("scopes", "Choose at least one scope.");
  return await retrying("create token", async () => {
    const { tokens, version } = await userTokens(ctx.kv, user.id);
    const now = Date.now();
    if (tokens.filter((t) => isLive(t, now)).length >= MAX_LIVE_TOKENS) {
      const holder = opts.actor?.id === user.id ? "You hold" : `${user.name} holds`;
      throw new ApiError(
        422,
        `${holder} ${MAX_LIVE_TOKENS} live tokens already, the most allowed; revoke one first.`,
      );
    }
    const made = build(user, opts.scopes, name, opts.expiresInSeconds ?? null);
    const ok = await insertToken(ctx.kv, made.token, version, {
      team_id: user.team_id,
      action: "token.created",
      actor_id: actorId(opts.actor),
      target_id: made.token.id,
    });
    return ok ? made : null;
  });
}

const holderOf = (t: Token) => ({ id: t.user_id, team_id: t.team_id, type: t.user_type });

/** An unrevoked token the actor may manage, or the 404 (its existence is not told). */
async function liveToken(ctx: Ctx, id: string, actor: Actor): Promise<Deno.KvEntry<Token>> {
  const entry = isUuid(id) ? await getTokenById(ctx.kv, id.toLowerCase()) : null;
  if (!entry) throw noSuchToken();
  authorize(whoOf(actor), "token.manage", holderOf(entry.value));
  if (entry.value.revoked_at) throw invalid("id", "The token is already revoked.");
  return entry;
}

export function revokeTokenById(ctx: Ctx, id: string, actor: Actor): Promise<Token> {
  return retrying("revoke token", async () => {
    const entry = await liveToken(ctx, id, actor);
    return await revokeToken(ctx.kv, entry, nowIso(), {
      team_id: entry.value.team_id,
      action: "token.revoked",
      actor_id: actorId(actor),
      target_id: entry.value.id,
    });
  });
}

/** A token as listed: what it grants and when it was used, never its hash. */
export const tokenView = (t: Token) => ({
  id: t.id,
  name: t.name,
  kind: t.kind,
  scopes: t.scopes,
  created_at: t.created_at,
  expires_at: t.expires_at,
  revoked_at: t.revoked_at,
  last_used_at: t.last_used_at,
});

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
    const remaining = old.expires_at
      ? Math.max(1, Math.ceil((Date.parse(old.expires_at) - Date.now()) / 1000))
      : null;
    const made = build(
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
      actor_id: actorId(actor),
      target_id: old.id,
    });
    return replaced ? made : null;
  });
}

const TOUCH_EVERY_MS = 60_000;
const lastTouched = new Map<string, number>();

/** Throws the 401 unless the token exists, is unrevoked and unexpired. */
function assertLive(token: Token | null | undefined, now = Date.now()): Token {
  if (!token || token.revoked_at || (token.expires_at && Date.parse(token.expires_at) <= now)) {
    throw unauthenticated("The token is invalid, revoked or expired.");
  }
  return token;
}

function touch(ctx: Ctx, token: Token, now: number) {
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
 * is taken from here; whether it is still unrevoked is not: see `TokenCheck`.
 */
const known = new RecentMap<string, Token>(10_000);

/**
 * `authenticate` without its read when the token was seen before: the subject then carries a
 * pending `token_check`, which the request settles by reading the token's entry in the same
 * `getMany` as its first resource (see `settleTokenCheck`), or with `verifySubject` before
 * anything is written or answered. A revocation made by any process is still seen at once.
 */
export async function identify(ctx: Ctx, value: string | undefined): Promise<Subject> {
  const hash = hashOfWellFormed(value);
  const now = Date.now();
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

/** Settles a pending check with the token's entry as read; throws 401 if it no longer holds. */
export function settleTokenCheck(subject: Subject, entry: Deno.KvEntryMaybe<unknown>): void {
  const check = subject.token_check;
  if (!check || check.settled) return;
  const hash = check.key[1] as string;
  try {
    assertLive(entry.value as Token | null);
  } catch (e) {
    known.delete(hash);
    throw e;
  }
  check.settled = true;
}

/** Settles the subject's pending token check, if any, with a read of its own. */
export async function verifySubject(ctx: Ctx, subject: Subject): Promise<void> {
  if (subject.token_check && !subject.token_check.settled) {
    settleTokenCheck(subject, await ctx.kv.get(subject.token_check.key));
  }
}

/** The key of a pending token check, to read along with a request's first resource. */
export const pendingTokenKey = (subject: Subject): Deno.KvKey | null =>
  subject.token_check && !subject.token_check.settled ? subject.token_check.key : null;
