/** Field name to the messages that explain why it failed. */
export type FieldErrors = Record<string, string[]>;

/**
 * The one error type the API answers with. Thrown anywhere below a route and turned into
 * JSON by the app's single error handler.
 */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 410 | 413 | 422 | 429 | 503,
    message: string,
    readonly errors?: FieldErrors,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const notFound = (what = "Not found.") => new ApiError(404, what);
export const forbidden = (why: string) => new ApiError(403, why);
export const unauthenticated = (why = "Unauthenticated.") => new ApiError(401, why);

/** Why a credential was refused: what the Slack Web API names, and what a 401 says. */
export type RefusedBecause = "missing" | "invalid" | "revoked" | "expired" | "inactive";

/** A 401 that knows why: a token missing, malformed or unknown, revoked, expired, or its user's. */
export class Unauthenticated extends ApiError {
  constructor(readonly reason: RefusedBecause, message: string) {
    super(401, message);
  }
}

/** A 422 for one field, worded the way Laravel-style clients expect. */
export function invalid(field: string, message: string): ApiError {
  return new ApiError(422, message, { [field]: [message] });
}

/**
 * For a `.catch` on taking something back (revoking a token or a hook): the 422 that says it was
 * already done, by someone else meanwhile, is as good as done; anything else is rethrown.
 */
export function unlessAlreadyDone(e: unknown): void {
  if (!(e instanceof ApiError && e.status === 422)) throw e;
}

/**
 * A write kept losing to concurrent writers (other requests, other instances, the CLI) until its
 * deadline: nothing was written, and trying again may well work. The store says so plainly;
 * where HTTP is spoken it becomes a 503 with `Retry-After` (routes/errors.ts).
 */
export class ConflictError extends Error {
  constructor(what: string) {
    super(`${what}: the store is busy with concurrent changes and nothing was written; try again.`);
  }
}
