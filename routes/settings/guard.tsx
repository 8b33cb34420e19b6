import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import type { Ctx } from "../../domain/context.ts";
import { csrfMatches, sessionFor } from "../../domain/people/sessions.ts";
import { permits } from "../../domain/policy.ts";
import { subjectOfPerson } from "../../domain/principals.ts";
import { findTeam } from "../../domain/people/workspace.ts";
import { MessagePage, SignInHelp } from "../../web/message.tsx";
import { cookieOptions, SESSION_COOKIE } from "./cookie.ts";
import type { SettingsEnv } from "./env.ts";
import type { Viewer } from "../../web/layout.tsx";
import { page, readForm } from "./render.ts";

/** Where a request may come from: the public address (BASE_URL) or the one it was sent to. */
export function sameOrigin(ctx: Ctx, c: Context): boolean {
  const origin = c.req.header("Origin");
  if (origin) {
    return origin === new URL(ctx.settings.baseUrl).origin || origin === new URL(c.req.url).origin;
  }
  const site = c.req.header("Sec-Fetch-Site");
  return site === undefined || site === "same-origin";
}

export const refused = (c: Context) =>
  page(
    c,
    <MessagePage title="Refused">
      <p>
        This form came from another site, or from a page of another session. Nothing was changed. Go
        back, reload the page and try again.
      </p>
    </MessagePage>,
    403,
  );

export const notSignedIn = (c: Context) =>
  page(
    c,
    <MessagePage title="Sign in">
      <p>You are not signed in, or your session has ended.</p>
      <SignInHelp />
    </MessagePage>,
    401,
  );

/** The live session the request's cookie names, and its person as the pages see them; or null. */
export async function sessionViewer(ctx: Ctx, c: Context) {
  const session = await sessionFor(ctx, getCookie(c, SESSION_COOKIE, cookieOptions(ctx).prefix));
  if (!session) return null;
  const subject = subjectOfPerson(session.user);
  const admin = permits(subject, "team.administer", session.user);
  const team = await findTeam(ctx, session.user.team_id);
  const viewer: Viewer = {
    user: session.user,
    team: team.name,
    subject,
    csrf: session.csrf,
    admin,
  };
  return { session, viewer };
}

/**
 * The door of every page but sign-in: a live session (401 page otherwise), and on a POST a form
 * from this origin carrying this session's CSRF token (403 page otherwise, before anything runs).
 */
export const signedIn = (ctx: Ctx): MiddlewareHandler<SettingsEnv> => async (c, next) => {
  const post = c.req.method === "POST";
  if (post && !sameOrigin(ctx, c)) return refused(c);
  const signed = await sessionViewer(ctx, c);
  if (!signed) return notSignedIn(c);
  if (post) {
    const form = await readForm(c);
    if (!csrfMatches(signed.session, form._csrf)) return refused(c);
    c.set("form", form);
  }
  c.set("session", signed.session);
  c.set("viewer", signed.viewer);
  await next();
};

export const notFoundPage = (c: Context, viewer?: SettingsEnv["Variables"]["viewer"]) =>
  page(
    c,
    <MessagePage title="Not found" viewer={viewer}>
      <p>There is nothing here.</p>
    </MessagePage>,
    404,
  );

/** The team's parts of the screen: a member is not told they exist. */
export const adminsOnly: MiddlewareHandler<SettingsEnv> = async (c, next) => {
  if (!c.var.viewer.admin) return notFoundPage(c, c.var.viewer);
  await next();
};
