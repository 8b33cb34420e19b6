import { ConflictError } from "./errors.ts";

/** How long a write keeps trying against concurrent writers before it answers 503. */
export const CONTENTION_DEADLINE_MS = 3_000;
const FIRST_WAIT_MS = 2;
const MAX_WAIT_MS = 100;

/**
 * Waits before try number `tries` (1-based) of a write that lost to a concurrent one:
 * exponential with full jitter, so writers that collided don't collide again in step.
 */
export function backoff(tries: number): Promise<void> {
  const cap = Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.min(tries, 10));
  return new Promise((r) => setTimeout(r, Math.random() * cap));
}

/**
 * Runs a read-check-commit step again while a concurrent change beats its commit (the step
 * returns null), with backoff, until CONTENTION_DEADLINE_MS has passed: then ConflictError (503,
 * nothing written). Each round reads afresh, so the step's rules see the winner's result.
 */
export async function retrying<T>(what: string, step: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + CONTENTION_DEADLINE_MS;
  for (let tries = 0;; tries++) {
    if (tries > 0) await backoff(tries);
    const done = await step();
    if (done !== null) return done;
    if (Date.now() >= deadline) throw new ConflictError(what);
  }
}
