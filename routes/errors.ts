import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError, ConflictError } from "../core/errors.ts";
import { errorFields, log } from "../core/log.ts";

/** How long a client that met a busy store should wait before trying again. */
const BUSY_RETRY_AFTER_S = 1;

/**
 * An error as HTTP knows it: the store's conflict is a 503 with `Retry-After` (nothing was
 * written, so sending the same request again is safe); an ApiError stays as it is.
 */
export function httpErrorOf(err: Error): Error {
  if (!(err instanceof ConflictError)) return err;
  return new ApiError(503, err.message, undefined, { "Retry-After": String(BUSY_RETRY_AFTER_S) });
}

/**
 * The challenge of a 401 (RFC 6750): the scheme, and `invalid_token` when the request carried
 * credentials that did not hold.
 */
const challenge = (c: Context) =>
  c.req.header("Authorization") ? 'Bearer error="invalid_token"' : "Bearer";

/** The one place an error becomes a response: JSON with `message`, and `errors` on a 422. */
export function errorResponse(thrown: Error, c: Context): Response {
  const err = httpErrorOf(thrown);
  if (err instanceof ApiError) {
    const body = err.errors
      ? { message: err.message, errors: err.errors }
      : { message: err.message };
    for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
    if (err.status === 401) c.header("WWW-Authenticate", challenge(c));
    return c.json(body, err.status);
  }
  if (err instanceof HTTPException && err.status === 413) {
    return c.json({ message: "The request body is larger than 1 MiB." }, 413);
  }
  // Log the route, never the request: its headers, body and even its path (a webhook URL's
  // secret) may carry credentials.
  log.error("http: a request failed", {
    method: c.req.method,
    route: c.req.routePath,
    request_id: c.get("requestId"),
    ...errorFields(err),
  });
  return c.json({ message: "Internal server error." }, 500);
}
