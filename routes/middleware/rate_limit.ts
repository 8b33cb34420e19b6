import type { MiddlewareHandler } from "hono";
import type { Ctx } from "../../domain/context.ts";
import { ApiError } from "../../domain/errors.ts";
import { verifySubject } from "../../domain/tokens.ts";
import type { ApiEnv } from "../env.ts";
import type { RateLimiter } from "../../domain/rate_limit.ts";

/**
 * Applies the per-token limit and sets the X-RateLimit headers on every answer. A remembered
 * token is verified before it is refused, so a revoked one gets its 401 first.
 */
export const rateLimit =
  (ctx: Ctx, limiter: RateLimiter): MiddlewareHandler<ApiEnv> => async (c, next) => {
    const verdict = await limiter.hit(`token:${c.var.subject.token_id}`);
    if (!verdict.allowed) await verifySubject(ctx, c.var.subject);
    c.header("X-RateLimit-Limit", String(limiter.limit));
    c.header("X-RateLimit-Remaining", String(verdict.remaining));
    if (!verdict.allowed) {
      throw new ApiError(429, "Too many requests; slow down.", undefined, {
        "Retry-After": String(verdict.resetIn),
        "X-RateLimit-Reset": String(verdict.resetIn),
      });
    }
    await next();
  };
