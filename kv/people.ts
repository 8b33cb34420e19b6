import type { Token, User } from "../core/types.ts";
import { addAudit, type AuditDraft } from "./audit.ts";
import { keys } from "./keys.ts";
import { putToken } from "./tokens.ts";
import type { Store } from "./store/store.ts";

/** A user as read, for a change that must not land over another. */
export const getUserEntry = (kv: Store, id: string) => kv.get<User>(keys.user(id));

/**
 * Replaces a user read as `entry`, with its tokens rewritten as `tokens` (revoked, or carrying
 * the new role), in one commit with its audit entry. The tokens version moves, so every
 * process's cached authentications and open streams look at the tokens again. False when the
 * user changed since it was read, or its tokens since `tokensVersion` was read with them (a
 * revocation, rotation or creation meanwhile), or `witness` (an owner the change counts on to
 * remain) did.
 */
export async function replaceUser(
  kv: Store,
  { entry, next, tokens, tokensVersion, witness, audit }: {
    entry: Deno.KvEntry<User>;
    next: User;
    tokens: Token[];
    tokensVersion: Deno.KvEntryMaybe<unknown>;
    witness: Deno.KvEntry<User> | null;
    audit: AuditDraft;
  },
): Promise<boolean> {
  const op = kv.atomic().check(entry, tokensVersion).set(keys.user(next.id), next)
    .set(keys.tokensVersion(), Date.now())
    .set(keys.userTokensVersion(next.id), Date.now());
  if (witness) op.check(witness);
  for (const t of tokens) putToken(op, t);
  addAudit(op, audit);
  return (await op.commit()).ok;
}

/**
 * Replaces a user read as `entry` with `next`, whose email differs: the old address's index goes,
 * the new one's must be free. False when the user changed since it was read, or another person
 * of the team took the address meanwhile.
 */
export async function replaceEmail(
  kv: Store,
  { entry, next, audit }: { entry: Deno.KvEntry<User>; next: User; audit: AuditDraft },
): Promise<boolean> {
  const op = kv.atomic().check(entry).set(keys.user(next.id), next);
  if (entry.value.email) op.delete(keys.userEmail(next.team_id, entry.value.email));
  if (next.email) {
    const key = keys.userEmail(next.team_id, next.email);
    op.check({ key, versionstamp: null }).set(key, next.id);
  }
  addAudit(op, audit);
  return (await op.commit()).ok;
}

/** The id of the person of a team with this (lower-cased) email, or null. */
export const userIdByEmail = async (kv: Store, teamId: string, email: string) =>
  (await kv.get<string>(keys.userEmail(teamId, email))).value;
