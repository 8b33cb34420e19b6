import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../../core/errors.ts";
import type { ApiEnv } from "../env.ts";
import type { RateLimiter } from "../../domain/guards/rate_limit.ts";

/**
 * Counts a request of `name` (a token, an incoming webhook) and sets the X-RateLimit headers;
 * throws the 429 when its window is used up.
 */
export async function applyRateLimit(
  c: Context,
  limiter: RateLimiter,
  name: string,
): Promise<void> {
  const verdict = await limiter.hit(name);
  c.header("X-RateLimit-Limit", String(limiter.limit));
  c.header("X-RateLimit-Remaining", String(verdict.remaining));
  if (!verdict.allowed) {
    const what = name.startsWith("hook:") ? "this incoming webhook" : "this token";
    throw new ApiError(
      429,
      `Too many requests: ${what} may make ${limiter.limit} a minute. Try again in ${verdict.resetIn} s.`,
      undefined,
      {
        "Retry-After": String(verdict.resetIn),
        "X-RateLimit-Reset": String(verdict.resetIn),
      },
    );
  }
}

/** The per-token limit, on every API request. */
export const rateLimit = (limiter: RateLimiter): MiddlewareHandler<ApiEnv> => async (c, next) => {
  const subject = c.var.subject;
  await applyRateLimit(c, limiter, `token:${subject.token_id}`);
  await next();
};
