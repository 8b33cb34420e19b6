import type { Settings } from "../core/settings.ts";

/** A Retry-After beyond this is not trusted: the schedule's own spacing still applies. */
const MAX_RETRY_AFTER_MS = 3_600_000;
const JITTER = 0.1;

/**
 * How long to wait after failed attempt number `attempt` (1-based): the schedule's interval
 * plus up to 10% jitter, or the receiver's Retry-After (capped at an hour) if that is longer.
 * A schedule shorter than the attempt count repeats its last interval.
 */
export function retryDelayMs(
  webhooks: Settings["webhooks"],
  attempt: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number {
  const { backoffMs } = webhooks;
  const base = backoffMs[Math.min(attempt - 1, backoffMs.length - 1)] ?? 0;
  const jittered = Math.round(base * (1 + JITTER * random()));
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
}

/** Whether attempt number `attempt` was the last one the schedule allows. */
export const isLastAttempt = (webhooks: Settings["webhooks"], attempt: number): boolean =>
  attempt >= webhooks.maxAttempts;
