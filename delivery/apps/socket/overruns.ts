/**
 * App-level tokens whose connection on this instance was closed for sending past its budget, and
 * until when their next connection here is refused: each connection costs its first frames,
 * however large, before any budget can close it, so one that overran may not come straight back.
 */

/** How long a token whose connection overran waits before another connects here. */
export const OVERRUN_WAIT_MS = 10_000;
/** Tokens remembered at most; past it, those done waiting are forgotten first. */
const REMEMBERED = 1_000;

export class Overruns {
  readonly #until = new Map<string, number>();

  /** A connection of `tokenId` overran its budget. */
  add(tokenId: string, now = Date.now()): void {
    if (this.#until.size > REMEMBERED) {
      for (const [t, until] of this.#until) if (until <= now) this.#until.delete(t);
    }
    this.#until.set(tokenId, now + OVERRUN_WAIT_MS);
  }

  /** How long `tokenId` must still wait, in ms; 0 when it need not. */
  waitOf(tokenId: string, now = Date.now()): number {
    const left = (this.#until.get(tokenId) ?? 0) - now;
    if (left > 0) return left;
    this.#until.delete(tokenId);
    return 0;
  }
}
