import { sameText } from "../../core/same_text.ts";
import { isActive, isActivePerson } from "../../core/active.ts";
import type { Ctx } from "../context.ts";
import type { LoginLink, Session, User } from "../../core/types.ts";
import { ApiError, invalid, notFound } from "../../core/errors.ts";
import { newId } from "../../core/ids.ts";
import { randomBase62, sha256Hex } from "../../core/random.ts";
import { getUser } from "../../kv/workspace.ts";
import { getUserEntry } from "../../kv/people.ts";
import {
  deleteSession,
  exchangeLink,
  getLoginLink,
  getSession,
  insertLoginLink,
  LINK_KEPT_MS,
} from "../../kv/sessions.ts";

export const LOGIN_LINK_TTL_MS = 15 * 60_000;
/** A session lasts a working day; then a new link is needed. */
export const SESSION_TTL_MS = 12 * 3_600_000;
const SECRET_CHARS = 40;
const SECRET = /^[0-9A-Za-z]{40}$/;

/** Where a sign-in link leads; its last segment is the link's secret. */
export const LOGIN_PATH = "/settings/login";

const NEW_LINK =
  "Ask whoever runs this service for a new one (they make it with deno task admin login-link).";

/** A link that matches nothing (or is not shaped like one): a guess, as far as anyone can tell. */
const linkUnknown = () => notFound(`This sign-in link is not known here. ${NEW_LINK}`);
const linkUsed = () => new ApiError(410, `This sign-in link was already used. ${NEW_LINK}`);
const linkExpired = () =>
  new ApiError(410, `This sign-in link has expired: a link works for 15 minutes. ${NEW_LINK}`);

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
  if (!isActive(user)) {
    throw invalid("user", "The user is deactivated; reactivate it before it signs in.");
  }
  const secret = randomBase62(SECRET_CHARS);
  const now = Date.now();
  const expires_at = new Date(now + LOGIN_LINK_TTL_MS).toISOString();
  await insertLoginLink(
    ctx.kv,
    sha256Hex(secret),
    { user_id: user.id, created_at: new Date(now).toISOString(), expires_at, used_at: null },
    LOGIN_LINK_TTL_MS + LINK_KEPT_MS,
  );
  return { url: `${ctx.settings.baseUrl}${LOGIN_PATH}/${secret}`, expires_at };
}

/** Whether something of `user`'s made at `madeAt` outlived a deactivation since (it is dead). */
const endedSince = (user: User, madeAt: number) =>
  !!user.signed_out_at && madeAt <= Date.parse(user.signed_out_at);

/** When a link was made; links kept from before `created_at` was stored tell it by their expiry. */
const linkMadeAt = (link: LoginLink) =>
  link.created_at ? Date.parse(link.created_at) : Date.parse(link.expires_at) - LOGIN_LINK_TTL_MS;

/**
 * The usable link a secret names and the person it signs in, without using it: what opening the
 * link shows ("Sign in as ..."), so a link previewer or mail scanner that opens it uses nothing.
 * Unknown or malformed: 404; used or expired: 410, saying which.
 */
export async function openLoginLink(
  ctx: Ctx,
  linkSecret: string,
): Promise<{ link: Deno.KvEntry<LoginLink>; user: Deno.KvEntry<User> }> {
  if (!SECRET.test(linkSecret)) throw linkUnknown();
  const link = await getLoginLink(ctx.kv, sha256Hex(linkSecret));
  if (link.versionstamp === null) throw linkUnknown();
  if (link.value.used_at) throw linkUsed();
  if (Date.parse(link.value.expires_at) <= Date.now()) throw linkExpired();
  const user = await getUserEntry(ctx.kv, link.value.user_id);
  const person = user.value;
  if (!person || !isActivePerson(person)) throw linkUnknown();
  if (endedSince(person, linkMadeAt(link.value))) throw linkUnknown();
  return { link, user: user as Deno.KvEntry<User> };
}

/**
 * Uses up a sign-in link and starts a session (the "Sign in" button's POST). Returns the cookie
 * value, which exists nowhere else (only its hash is stored). Errors as `openLoginLink`'s; of two
 * tabs using one link, the second gets "already used".
 */
export async function signIn(
  ctx: Ctx,
  linkSecret: string,
): Promise<{ cookie: string; session: Session }> {
  const { link, user } = await openLoginLink(ctx, linkSecret);
  const now = Date.now();
  const cookie = randomBase62(SECRET_CHARS);
  const session: Session = {
    id: newId(now),
    user: user.value,
    csrf: randomBase62(SECRET_CHARS),
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + SESSION_TTL_MS).toISOString(),
  };
  const used = { ...link.value, used_at: new Date(now).toISOString() };
  const keptMs = Date.parse(link.value.expires_at) + LINK_KEPT_MS - now;
  const sessionHash = sha256Hex(cookie);
  if (
    !await exchangeLink(ctx.kv, {
      link,
      user,
      used,
      keptMs,
      sessionHash,
      session,
      ttlMs: SESSION_TTL_MS,
    })
  ) {
    throw linkUsed();
  }
  return { cookie, session };
}

/**
 * The live session a cookie names, or null (none, unknown, expired or malformed, or its person
 * deactivated since). It carries the person as they are now: a role changed since sign-in
 * counts from the next page on.
 */
export async function sessionFor(ctx: Ctx, cookie: string | undefined): Promise<Session | null> {
  if (!cookie || !SECRET.test(cookie)) return null;
  const session = await getSession(ctx.kv, sha256Hex(cookie));
  if (!session || Date.parse(session.expires_at) <= Date.now()) return null;
  const user = await getUser(ctx.kv, session.user.id);
  if (!user || !isActive(user) || endedSince(user, Date.parse(session.created_at))) return null;
  return { ...session, user };
}

/** Ends the session a cookie names; ending an ended one is fine. */
export async function signOut(ctx: Ctx, cookie: string): Promise<void> {
  if (SECRET.test(cookie)) await deleteSession(ctx.kv, sha256Hex(cookie));
}

/** Whether a form's CSRF token is this session's, compared in constant time. */
export function csrfMatches(session: Session, given: unknown): boolean {
  return typeof given === "string" && sameText(given, session.csrf);
}
