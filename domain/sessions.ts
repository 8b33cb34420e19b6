import { timingSafeEqual } from "node:crypto";
import type { Ctx } from "./context.ts";
import type { Session } from "./types.ts";
import { ApiError, invalid, notFound } from "./errors.ts";
import { newId } from "./ids.ts";
import { randomBase62, sha256Hex } from "./tokens.ts";
import { getUser } from "../kv/workspace.ts";
import {
  deleteSession,
  exchangeLink,
  getLoginLink,
  getSession,
  insertLoginLink,
} from "../kv/sessions.ts";

export const LOGIN_LINK_TTL_MS = 15 * 60_000;
/** A session lasts a working day; then a new link is needed. */
export const SESSION_TTL_MS = 12 * 3_600_000;
const SECRET_CHARS = 40;
const SECRET = /^[0-9A-Za-z]{40}$/;

/** Where a sign-in link leads; its last segment is the link's secret. */
export const LOGIN_PATH = "/settings/login";

/** What every used, expired, unknown or malformed link gets: the same answer. */
export const linkUnusable = () =>
  new ApiError(
    410,
    "This sign-in link was already used or has expired. Ask for a new one: deno task admin login-link --user <your user id>.",
  );

/** A one-time link into the settings screen for a human, valid LOGIN_LINK_TTL_MS. */
export async function createLoginLink(
  ctx: Ctx,
  userId: string,
): Promise<{ url: string; expires_at: string }> {
  const user = await getUser(ctx.kv, userId);
  if (!user) throw notFound("No such user.");
  if (user.type !== "human") {
    throw invalid("user", "Bots can't sign in: only people have a settings screen.");
  }
  const secret = randomBase62(SECRET_CHARS);
  const expires_at = new Date(Date.now() + LOGIN_LINK_TTL_MS).toISOString();
  await insertLoginLink(
    ctx.kv,
    sha256Hex(secret),
    { user_id: user.id, expires_at },
    LOGIN_LINK_TTL_MS,
  );
  return { url: `${ctx.settings.baseUrl}${LOGIN_PATH}/${secret}`, expires_at };
}

/**
 * Uses up a sign-in link and starts a session. Returns the cookie value, which exists nowhere
 * else (only its hash is stored). Any link that can't be used: the 410 of `linkUnusable`.
 */
export async function signIn(
  ctx: Ctx,
  linkSecret: string,
): Promise<{ cookie: string; session: Session }> {
  if (!SECRET.test(linkSecret)) throw linkUnusable();
  const link = await getLoginLink(ctx.kv, sha256Hex(linkSecret));
  if (link.versionstamp === null || Date.parse(link.value.expires_at) <= Date.now()) {
    throw linkUnusable();
  }
  const user = await getUser(ctx.kv, link.value.user_id);
  if (!user || user.type !== "human") throw linkUnusable();
  const now = Date.now();
  const cookie = randomBase62(SECRET_CHARS);
  const session: Session = {
    id: newId(now),
    user,
    csrf: randomBase62(SECRET_CHARS),
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + SESSION_TTL_MS).toISOString(),
  };
  if (!await exchangeLink(ctx.kv, link, sha256Hex(cookie), session, SESSION_TTL_MS)) {
    throw linkUnusable();
  }
  return { cookie, session };
}

/** The live session a cookie names, or null (none, unknown, expired or malformed). */
export async function sessionFor(ctx: Ctx, cookie: string | undefined): Promise<Session | null> {
  if (!cookie || !SECRET.test(cookie)) return null;
  const session = await getSession(ctx.kv, sha256Hex(cookie));
  return session && Date.parse(session.expires_at) > Date.now() ? session : null;
}

/** Ends the session a cookie names; ending an ended one is fine. */
export async function signOut(ctx: Ctx, cookie: string): Promise<void> {
  if (SECRET.test(cookie)) await deleteSession(ctx.kv, sha256Hex(cookie));
}

/** Whether a form's CSRF token is this session's, compared in constant time. */
export function csrfMatches(session: Session, given: unknown): boolean {
  if (typeof given !== "string") return false;
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(session.csrf);
  return a.length === b.length && timingSafeEqual(a, b);
}
