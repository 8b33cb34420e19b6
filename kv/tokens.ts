import type { Token } from "../domain/types.ts";
import { addAudit, type AuditDraft } from "./audit.ts";
import { commitOrThrow } from "./commit.ts";
import { keys } from "./keys.ts";

/** The token whose value hashes to `hash`: the one read every authenticated request costs. */
export async function getTokenByHash(kv: Deno.Kv, hash: string): Promise<Token | null> {
  return (await kv.get<Token>(keys.token(hash))).value;
}

export async function getTokenById(kv: Deno.Kv, id: string): Promise<Token | null> {
  const hash = (await kv.get<string>(keys.tokenId(id))).value;
  return hash ? await getTokenByHash(kv, hash) : null;
}

function put(op: Deno.AtomicOperation, token: Token) {
  op.set(keys.token(token.hash), token).set(keys.tokenId(token.id), token.hash);
}

/** Stores a new token with its audit entry. */
export async function insertToken(kv: Deno.Kv, token: Token, audit: AuditDraft): Promise<void> {
  const op = kv.atomic().check({ key: keys.token(token.hash), versionstamp: null });
  put(op, token);
  addAudit(op, audit);
  await commitOrThrow(op, "create token");
}

/** Marks a token revoked, with its audit entry; fails if the token changed meanwhile. */
export async function revokeToken(
  kv: Deno.Kv,
  token: Token,
  revokedAt: string,
  audit: AuditDraft,
): Promise<Token> {
  const revoked = { ...token, revoked_at: revokedAt };
  const op = kv.atomic();
  put(op, revoked);
  addAudit(op, audit);
  await commitOrThrow(op, "revoke token");
  return revoked;
}

/** Revokes `old` and stores `next` in one commit: never both valid, never neither. */
export async function replaceToken(
  kv: Deno.Kv,
  old: Token,
  next: Token,
  audit: AuditDraft,
): Promise<void> {
  const op = kv.atomic().check({ key: keys.token(next.hash), versionstamp: null });
  put(op, { ...old, revoked_at: next.created_at });
  put(op, next);
  addAudit(op, audit);
  await commitOrThrow(op, "rotate token");
}

/**
 * Records last use. Not guarded by a check: a concurrent revoke must win, so this only
 * writes when the stored token is still unrevoked, and never resurrects one.
 */
export async function touchToken(kv: Deno.Kv, hash: string, at: string): Promise<void> {
  const entry = await kv.get<Token>(keys.token(hash));
  if (!entry.value || entry.value.revoked_at) return;
  await kv.atomic().check(entry).set(keys.token(hash), { ...entry.value, last_used_at: at })
    .commit();
}
