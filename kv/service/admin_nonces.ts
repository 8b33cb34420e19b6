/**
 * The nonces of the operator's signed requests (domain/data/admin_requests.ts): each is taken once,
 * in a commit that requires it unseen, so the same request sent twice, to any instance, runs once.
 * The request's entry in the admin log lands in the same commit.
 */
import { addAdminAudit, type AdminAuditEntry } from "./admin_audit.ts";
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";

/**
 * Whether `nonce` was unseen and is now taken, kept for `keepMs` (past its request's window), with
 * `entry` added to the admin log.
 */
export async function takeNonce(
  kv: Store,
  { nonce, keepMs, entry }: {
    nonce: string;
    keepMs: number;
    entry: Omit<AdminAuditEntry, "id" | "created_at">;
  },
): Promise<boolean> {
  const key = keys.adminNonce(nonce);
  const op = kv.atomic().check({ key, versionstamp: null }).set(key, Date.now(), {
    expireIn: keepMs,
  });
  return (await addAdminAudit(op, entry).commit()).ok;
}
