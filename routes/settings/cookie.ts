import type { CookieOptions } from "hono/utils/cookie";
import type { Ctx } from "../../domain/context.ts";
import { SESSION_TTL_MS } from "../../domain/people/sessions.ts";

export const SESSION_COOKIE = "tc_session";

/**
 * HttpOnly and SameSite=Strict always; over https also Secure with the `__Host-` prefix, so no
 * other host or path can set or shadow it.
 */
export function cookieOptions(ctx: Ctx): CookieOptions & { prefix?: "host" } {
  const secure = ctx.settings.baseUrl.startsWith("https:");
  return {
    httpOnly: true,
    sameSite: "Strict",
    path: "/",
    maxAge: SESSION_TTL_MS / 1000,
    ...(secure ? { secure: true, prefix: "host" as const } : {}),
  };
}

/**
 * Where to go after signing in, when a page that needs a session sent the person to sign in
 * first (an app's install link): only such a page's own path is ever taken from it.
 */
export const RETURN_COOKIE = "tc_return_to";

export function returnCookieOptions(ctx: Ctx): CookieOptions & { prefix?: "host" } {
  return { ...cookieOptions(ctx), maxAge: 15 * 60 };
}

/** The path to return to, if it is one that may be returned to. */
export const returnPath = (value: string | undefined) =>
  value?.startsWith("/oauth/authorize?") ? value : null;
