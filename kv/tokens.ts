import type { Token } from "../core/types.ts";
import { addAudit, type AuditDraft } from "./audit.ts";
import { getAll } from "./store/commit.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store/store.ts";
import type { Plan } from "./store/plan.ts";

/** The token whose value hashes to `hash`: the one read every authenticated request costs. */
export async function getTokenByHash(kv: Store, hash: string): Promise<Token | null> {
  return (await kv.get<Token>(keys.token(hash))).value;
}

/** The token's entry, whose versionstamp lets a lifecycle change check nothing moved since. */
export async function getTokenById(kv: Store, id: string): Promise<Deno.KvEntry<Token> | null> {
  const hash = (await kv.get<string>(keys.tokenId(id))).value;
  if (!hash) return null;
  const entry = await kv.get<Token>(keys.token(hash));
  return entry.versionstamp === null ? null : entry;
}

/**
 * Writes a token and its indexes, and moves its user's tokens version: a change that rewrites the
 * user's tokens as it read them (a role change, a deactivation) checks that version, so it can't
 * land over a revocation, rotation or creation committed meanwhile.
 */
export function putToken(op: Plan, token: Token) {
  op.set(keys.token(token.hash), token)
    .set(keys.tokenId(token.id), token.hash)
    .set(keys.userToken(token.user_id, token.id), token.hash)
    .set(keys.userTokensVersion(token.user_id), Date.now());
}

/**
 * Stores a new token with its audit entry, if its user and the user's tokens are still as read
 * (`holder`, and `version` with the tokens, see `userTokens`): two creations counted against one
 * bound can't both pass it, and a token minted while its user is deactivated or given another
 * role can't land with what the user was before.
 */
export async function insertToken(
  kv: Store,
  { token, holder, version, audit }: {
    token: Token;
    holder: Deno.KvEntry<unknown>;
    version: Deno.KvEntryMaybe<unknown>;
    audit: AuditDraft;
  },
): Promise<boolean> {
  const op = kv.atomic()
    .check({ key: keys.token(token.hash), versionstamp: null }, holder)
    .check({ key: keys.userTokensVersion(token.user_id), versionstamp: version.versionstamp });
  putToken(op, token);
  addAudit(op, audit);
  return (await op.commit()).ok;
}

/** Marks a token revoked, with its audit entry. Null when the token changed since `entry`. */
export async function revokeToken(
  kv: Store,
  entry: Deno.KvEntry<Token>,
  revokedAt: string,
  audit: AuditDraft,
): Promise<Token | null> {
  const revoked = { ...entry.value, revoked_at: revokedAt };
  const op = kv.atomic().check(entry).set(keys.tokensVersion(), Date.now());
  putToken(op, revoked);
  addAudit(op, audit);
  return (await op.commit()).ok ? revoked : null;
}

/**
 * Revokes `old` and stores `next` in one commit: never both valid, never neither. False when
 * `old` changed since it was read, so two rotations can't both leave a live successor.
 */
export async function replaceToken(
  kv: Store,
  old: Deno.KvEntry<Token>,
  next: Token,
  audit: AuditDraft,
): Promise<boolean> {
  const op = kv.atomic().check(old, { key: keys.token(next.hash), versionstamp: null })
    .set(keys.tokensVersion(), Date.now());
  putToken(op, { ...old.value, revoked_at: next.created_at });
  putToken(op, next);
  addAudit(op, audit);
  return (await op.commit()).ok;
}

/** A user's tokens, oldest first, revoked ones included: through the user's index. */
export async function listUserTokens(kv: Store, userId: string): Promise<Token[]> {
  return (await userTokens(kv, userId)).tokens;
}

/**
 * A user's tokens, with the version of the set as read first: a creation checks it, so a count
 * taken from these tokens still holds when the creation commits.
 */
export async function userTokens(kv: Store, userId: string) {
  const version = await kv.get(keys.userTokensVersion(userId));
  const hashes: string[] = [];
  for await (const e of kv.list<string>({ prefix: keys.userTokens(userId) })) hashes.push(e.value);
  const entries = await getAll<Token>(kv, hashes.map((h) => keys.token(h)));
  return { version, tokens: entries.flatMap((e) => e.value ? [e.value] : []) };
}

/**
 * Indexes tokens stored before `["user_tokens", ...]` existed. Idempotent, and harmless beside a
 * process creating tokens meanwhile (both write the same index entries).
 */
export async function indexUserTokens(kv: Store): Promise<void> {
  let op = kv.atomic();
  let pending = 0;
  for await (const e of kv.list<Token>({ prefix: keys.tokens() })) {
    op.set(keys.userToken(e.value.user_id, e.value.id), e.value.hash);
    if (++pending === 500) {
      await op.commit();
      op = kv.atomic();
      pending = 0;
    }
  }
  if (pending) await op.commit();
}

/**
 * Records last use. Not guarded by a check: a concurrent revoke must win, so this only
 * writes when the stored token is still unrevoked, and never resurrects one.
 */
export async function touchToken(kv: Store, hash: string, at: string): Promise<void> {
  const entry = await kv.get<Token>(keys.token(hash));
  if (!entry.value || entry.value.revoked_at) return;
  await kv.atomic().check(entry).set(keys.token(hash), { ...entry.value, last_used_at: at })
    .commit();
}

/** The version every revocation and rotation rewrites: a change means tokens must be read again. */
export const tokensVersion = async (kv: Store) => (await kv.get(keys.tokensVersion())).versionstamp;

/** Tokens by hash, as they are now (10 a read). */
export const tokensByHash = (kv: Store, hashes: string[]) =>
  getAll<Token>(kv, hashes.map((h) => keys.token(h)));
