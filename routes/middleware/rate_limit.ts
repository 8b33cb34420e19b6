import type { MiddlewareHandler } from "hono";
import type { Ctx } from "../../domain/context.ts";
import { ApiError } from "../../domain/errors.ts";
import { verifySubject } from "../../domain/tokens.ts";
import type { ApiEnv } from "../env.ts";

interface Window {
  resetAt: number;
  used: number;
}

const WINDOW_MS = 60_000;

/**
 * A fixed one-minute window per key, kept in this process's memory so a request costs no KV
 * commit. With several instances each keeps its own count: the effective limit is up to
 * `limit × instances` (documented in the README).
 */
export class RateLimiter {
  #windows = new Map<string, Window>();
  #sweepAt = 0;

  constructor(readonly limit: number) {}

  /** Counts one request; returns what the headers need. */
  hit(key: string, now = Date.now()): { allowed: boolean; remaining: number; resetIn: number } {
    this.#sweep(now);
    let w = this.#windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { resetAt: now + WINDOW_MS, used: 0 };
      this.#windows.set(key, w);
    }
    const allowed = w.used < this.limit;
    if (allowed) w.used++;
    return {
      allowed,
      remaining: this.limit - w.used,
      resetIn: Math.max(1, Math.ceil((w.resetAt - now) / 1000)),
    };
  }

  #sweep(now: number) {
    if (now < this.#sweepAt) return;
    this.#sweepAt = now + WINDOW_MS;
    for (const [key, w] of this.#windows) if (w.resetAt <= now) this.#windows.delete(key);
  }
}

/**
 * Applies the per-token limit and sets the X-RateLimit headers on every answer. A remembered
 * token is verified before it is refused, so a revoked one gets its 401 first.
 */
export const rateLimit =
  (ctx: Ctx, limiter: RateLimiter): MiddlewareHandler<ApiEnv> => async (c, next) => {
    const verdict = limiter.hit(`token:${c.var.subject.token_id}`);
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
