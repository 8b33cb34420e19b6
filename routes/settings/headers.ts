import type { MiddlewareHandler } from "hono";

/**
 * The headers of every page of the screen (and of the OAuth consent page, which is one of its
 * pages): no inline code, no framing, nothing cached, no referrer beyond this origin.
 * `formTargets` adds origins a form's answer may redirect to: browsers hold a form's redirect to
 * `form-action` too, and the consent page's answer goes back to the app.
 */
export function securityHeaders(formTargets: string[] = []): Record<string, string> {
  const formAction = ["'self'", ...formTargets].join(" ");
  return {
    "Content-Security-Policy":
      `default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
  };
}

const SECURITY_HEADERS = securityHeaders();

/** Sets the screen's headers on every answer that hasn't set its own. */
export const screenHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    if (!c.res.headers.has(name)) c.res.headers.set(name, value);
  }
};
