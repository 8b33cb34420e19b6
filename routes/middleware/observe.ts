import type { MiddlewareHandler } from "hono";
import { log } from "../../core/log.ts";
import { httpDuration, httpRequests, rateLimited } from "../../core/metrics.ts";

/** A request id a proxy set is kept if it looks like one; anything else is replaced. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** What the request log and metrics call a request no route answered. */
const UNMATCHED = "(unmatched)";

/** Methods named as they are; any other becomes OTHER, so a made-up method makes no new series. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export interface ObservedVars {
  requestId: string;
  /** Set by whatever identified the caller: a token's or an incoming webhook's id. */
  credential?: { token_id?: string; incoming_webhook_id?: string };
}

/**
 * One structured log line and the HTTP metrics per request, and `X-Request-Id` on every answer
 * (the proxy's, when it set a sane one). A request is named by its route pattern, never its raw
 * path: an incoming webhook's path is its secret. Health probes log at debug level only.
 */
export const observe = (): MiddlewareHandler<{ Variables: ObservedVars }> => async (c, next) => {
  const started = performance.now();
  const given = c.req.header("X-Request-Id");
  const requestId = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
  c.set("requestId", requestId);
  await next();
  // A WebSocket's 101 must reach Deno as the very response upgradeWebSocket made: a header set on
  // it has Hono copy it, and Deno 2.5 (Deno Deploy's) then refuses the upgrade.
  if (c.res.status !== 101) c.res.headers.set("X-Request-Id", requestId);
  const seconds = (performance.now() - started) / 1000;
  const route = c.req.routePath === "/*" || c.req.routePath === "*" ? UNMATCHED : c.req.routePath;
  const method = METHODS.has(c.req.method) ? c.req.method : "OTHER";
  const status = c.res.status;
  httpRequests.inc({ route, method, status });
  httpDuration.observe({ route, method }, seconds);
  // Guessing's 429s are counted where they are decided: no credential was found for them.
  if (status === 429 && c.var.credential) {
    rateLimited.inc({ kind: c.var.credential.incoming_webhook_id ? "incoming_webhook" : "token" });
  }
  log[route === "/up" ? "debug" : "info"]("request", {
    request_id: requestId,
    method,
    route,
    status,
    duration_ms: Math.round(seconds * 10_000) / 10,
    ...c.var.credential,
  });
};
