import type { MiddlewareHandler } from "hono";
import { headerText, isSafeHeaderValue } from "../../core/header_text.ts";
import { log } from "../../core/log.ts";

/**
 * The last word on every answer's headers: a value holding a control character, which Deno's
 * HTTP writer answers by ending the process, goes out percent-encoded instead, and the header's
 * name is logged (never its value) so the route that let request data through is found. Values
 * from requests are made safe where they are set (core/header_text.ts); this holds for any that
 * were not, so one request can never end the service.
 */
export const headerGuard = (): MiddlewareHandler => async (c, next) => {
  await next();
  // A WebSocket's 101 must reach Deno as the very response upgradeWebSocket made.
  if (c.res.status === 101) return;
  const unsafe = [...c.res.headers].filter(([, value]) => !isSafeHeaderValue(value));
  if (unsafe.length === 0) return;
  const res = new Response(c.res.body, c.res);
  for (const [name, value] of unsafe) res.headers.set(name, headerText(value));
  c.res = undefined;
  c.res = res;
  log.error("http: a header held a control character; sent percent-encoded", {
    route: c.req.routePath,
    headers: unsafe.map(([name]) => name),
  });
};
