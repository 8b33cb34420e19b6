import { setImmediate } from "node:timers";

/**
 * Tasks that may start in the same run of the loop as an answer given to the HTTP server: a
 * start is synchronous work (an attempt is signed and its request opened, about 50 µs), and the
 * server writes the answer only once that run ends.
 */
const STARTS_BEFORE_ANSWERS = 8;

/**
 * Runs `fn`, which starts `count` tasks, as soon as it may: a few right after this task, before
 * timers; more only once the loop has polled its sockets, so that an answer given meanwhile is
 * written first. A timer waits for that poll (immediates and microtasks run before it), for
 * 1.3–2.6 ms on Deno 2.9. Measured at 30 posts a second heard by 100 subscriptions: a post's first
 * attempts, all started at once, held its answer's headers back 3.9 ms after its handler returned,
 * at the median; 0.3 ms with a timer. A few started at once keep a post's deliveries close behind
 * its answer (`deno task bench "delivery latency"`).
 */
export function startSoon(count: number, fn: () => void): void {
  if (count <= STARTS_BEFORE_ANSWERS) setImmediate(fn);
  else setTimeout(fn, 0);
}
