/**
 * A value worked out early whose failure must be reported later. Requests are read before the
 * checks that answer first (404, then 403), so that one KV read can serve them all; a bad body
 * or path segment only becomes the 422 once those checks pass.
 */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Waits for `promise` and keeps its outcome, failure included, for later. */
export const settle = <T>(promise: Promise<T>): Promise<Settled<T>> =>
  promise.then((value) => ({ ok: true, value }), (error) => ({ ok: false, error }));

/** Runs `fn` now and keeps its outcome, failure included, for later. */
export function attempt<T>(fn: () => T): Settled<T> {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The value, or the failure it was kept with, thrown now. */
export function unwrap<T>(pending: Settled<T>): T {
  if (!pending.ok) throw pending.error;
  return pending.value;
}

/** The value when there is one: for deciding what to read, never for deciding what is valid. */
export const peek = <T>(pending: Settled<T>): T | undefined =>
  pending.ok ? pending.value : undefined;

/** Whether `work` settles within `ms`; the timer is cleared either way. */
export async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  if (ms <= 0) return false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) => timer = setTimeout(() => r(false), ms));
  try {
    return await Promise.race([work.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
