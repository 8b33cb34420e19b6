import type { LoginLink, Session, User } from "../core/types.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store/store.ts";

/** How long a used or expired link is kept after its expiry, so opening it says which it was. */
export const LINK_KEPT_MS = 24 * 3_600_000;

/** Stores a sign-in link. `expireIn` only tidies: expiry is checked against `expires_at`. */
export async function insertLoginLink(
  kv: Store,
  hash: string,
  link: LoginLink,
  ttlMs: number,
): Promise<void> {
  await kv.set(keys.loginLink(hash), link, { expireIn: ttlMs });
}

export const getLoginLink = (kv: Store, hash: string) => kv.get<LoginLink>(keys.loginLink(hash));

/**
 * Marks a link used (`used`, kept `keptMs` to say so when opened again) and starts its session
 * in one commit: of two tabs using one link, exactly one gets a session. False when the link was
 * used (or changed) since it was read, or its person (`user`, as read) was deactivated meanwhile.
 */
export async function exchangeLink(
  kv: Store,
  { link, user, used, keptMs, sessionHash, session, ttlMs }: {
    link: Deno.KvEntry<LoginLink>;
    user: Deno.KvEntry<User>;
    /** The link as used, kept `keptMs` so that a second use is told it was. */
    used: LoginLink;
    keptMs: number;
    sessionHash: string;
    session: Session;
    ttlMs: number;
  },
): Promise<boolean> {
  const { ok } = await kv.atomic()
    .check(link, user)
    .set(link.key, used, { expireIn: Math.max(keptMs, 1) })
    .set(keys.session(sessionHash), session, { expireIn: ttlMs })
    .commit();
  return ok;
}

export const getSession = async (kv: Store, hash: string) =>
  (await kv.get<Session>(keys.session(hash))).value;

export const deleteSession = (kv: Store, hash: string) => kv.delete(keys.session(hash));
