import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Ctx } from "../../domain/context.ts";
import { ApiError } from "../../core/errors.ts";
import { errorFields, log } from "../../core/log.ts";
import type { GuessGuard } from "../../domain/guards/guessing.ts";
import { LOGIN_PATH, openLoginLink, signIn, signOut } from "../../domain/people/sessions.ts";
import { SCRIPT, STYLESHEET } from "../../web/assets.ts";
import { MessagePage, SignInHelp, SignInPage } from "../../web/message.tsx";
import { SETTINGS } from "../../web/paths.ts";
import { appPages } from "./apps.tsx";
import { auditPages } from "./audit.tsx";
import { botPages } from "./bots.tsx";
import { peoplePages } from "./people.tsx";
import {
  cookieOptions,
  RETURN_COOKIE,
  returnCookieOptions,
  returnPath,
  SESSION_COOKIE,
} from "./cookie.ts";
import { screenHeaders } from "./headers.ts";
import type { SettingsEnv } from "./env.ts";
import { notFoundPage, refused, sameOrigin, signedIn } from "./guard.tsx";
import { clientAddress } from "../client_address.ts";
import { httpErrorOf } from "../errors.ts";
import { incomingPages } from "./incoming.tsx";
import { page } from "./render.ts";
import { tokenPages } from "./tokens.tsx";
import { eventTypePages, webhookPages } from "./webhooks.tsx";
import type { CatalogEntry } from "../../domain/webhooks/catalog.ts";

/** Forms are small; anything bigger is not one of ours. */
const MAX_FORM_BYTES = 64 * 1024;

const ASSET_CACHE = "public, max-age=3600";

/** Errors no form shows itself again for: a page that says what happened. */
function errorPage(thrown: Error, c: Context<SettingsEnv>) {
  const err = httpErrorOf(thrown);
  const viewer = c.get("viewer");
  if (err instanceof ApiError) {
    const title = err.status === 404
      ? "Not found"
      : err.status === 410
      ? "Sign-in link"
      : err.status === 429
      ? "Slow down"
      : "Not done";
    for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
    return page(
      c,
      <MessagePage title={title} viewer={viewer}>
        <p>{err.message}</p>
        {err.status === 410 || err.status === 429 ? null : (
          <p>
            <a href={SETTINGS}>Back to the settings</a>
          </p>
        )}
      </MessagePage>,
      err.status,
    );
  }
  log.error("settings: a request failed", {
    method: c.req.method,
    route: c.req.routePath,
    request_id: c.get("requestId"),
    ...errorFields(err),
  });
  return page(
    c,
    <MessagePage title="Something went wrong" viewer={viewer}>
      <p>Nothing may have been changed. Reload the page to see where things stand.</p>
    </MessagePage>,
    500,
  );
}

/** A sign-in link's lookups, counted against the client's address when they miss. */
const linkLookup = <T,>(ctx: Ctx, guard: GuessGuard, c: Context, lookup: () => Promise<T>) =>
  guard.lookup(clientAddress(c, ctx.settings.trustProxy), "login_link", lookup);

/** Opening a sign-in link: who it signs in, and a button that does. Nothing is used yet. */
async function showLoginLink(ctx: Ctx, guard: GuessGuard, c: Context<SettingsEnv>) {
  const secret = c.req.param("secret") ?? "";
  const { user } = await linkLookup(ctx, guard, c, () => openLoginLink(ctx, secret));
  // The screen's same-origin Referrer-Policy stands: with no-referrer the button's POST would
  // carry `Origin: null` and be refused as cross-site.
  return page(c, <SignInPage name={user.value.name} action={`${LOGIN_PATH}/${secret}`} />);
}

/** The sign-in button: uses the link, starts a session and leads to the screen. */
async function useLoginLink(ctx: Ctx, guard: GuessGuard, c: Context<SettingsEnv>) {
  if (!sameOrigin(ctx, c)) return refused(c);
  const secret = c.req.param("secret") ?? "";
  const { cookie } = await linkLookup(ctx, guard, c, () => signIn(ctx, secret));
  const options = cookieOptions(ctx);
  const previous = getCookie(c, SESSION_COOKIE, options.prefix);
  if (previous) await signOut(ctx, previous);
  setCookie(c, SESSION_COOKIE, cookie, options);
  c.header("Referrer-Policy", "no-referrer");
  const back = returnPath(getCookie(c, RETURN_COOKIE, options.prefix));
  if (back) deleteCookie(c, RETURN_COOKIE, returnCookieOptions(ctx));
  return c.redirect(back ?? SETTINGS, 303);
}

/** The settings screen: sign-in, sign-out, its assets and its pages. */
export function settingsRoutes(ctx: Ctx, guard: GuessGuard, catalog: CatalogEntry[]) {
  const screen = new Hono<SettingsEnv>()
    .use(signedIn(ctx))
    .route("/", tokenPages(ctx))
    .route("/people", peoplePages(ctx))
    .route("/bots", botPages(ctx))
    .route("/apps", appPages(ctx))
    .route("/webhooks", webhookPages(ctx))
    .route("/event-types", eventTypePages(ctx, catalog))
    .route("/incoming", incomingPages(ctx))
    .route("/audit", auditPages(ctx));

  const app = new Hono<SettingsEnv>();
  app.onError(errorPage);
  app.use(screenHeaders);
  app.use(bodyLimit({
    maxSize: MAX_FORM_BYTES,
    onError: (c) => c.text("The form is too large.", 413),
  }));
  app.get(
    "/assets/app.css",
    (c) =>
      c.body(STYLESHEET, 200, {
        "Content-Type": "text/css; charset=utf-8",
        "Cache-Control": ASSET_CACHE,
      }),
  );
  app.get("/assets/app.js", (c) =>
    c.body(SCRIPT, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": ASSET_CACHE,
    }));
  app.get("/", (c) => c.redirect(SETTINGS, 303));
  app.get("/login/:secret", (c) => showLoginLink(ctx, guard, c));
  app.post("/login/:secret", (c) => useLoginLink(ctx, guard, c));
  app.post("/sign-out", signedIn(ctx), async (c) => {
    await signOut(ctx, getCookie(c, SESSION_COOKIE, cookieOptions(ctx).prefix) ?? "");
    deleteCookie(c, SESSION_COOKIE, cookieOptions(ctx));
    return page(
      c,
      <MessagePage title="Signed out">
        <p>Your session has ended.</p>
        <SignInHelp />
      </MessagePage>,
    );
  });
  app.route("/integrations", screen);
  app.all("*", (c) => notFoundPage(c));
  return app;
}
