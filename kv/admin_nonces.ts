/**
 * The nonces of the operator's signed requests (domain/data/admin_requests.ts): each is taken once,
 * in a commit that requires it unseen, so the same request sent twice, to any instance, runs once.
 */
import { keys } from "./keys.ts";
import type { Store } from "./store.ts";

/** Whether `nonce` was unseen and is now taken, kept for `keepMs` (past its request's window). */
export async function takeNonce(kv: Store, nonce: string, keepMs: number): Promise<boolean> {
  const key = keys.adminNonce(nonce);
  const taken = await kv.atomic()
    .check({ key, versionstamp: null })
    .set(key, Date.now(), { expireIn: keepMs })
    .commit();
  return taken.ok;
}
