/**
 * A budget of work per unit of time for one client (a connection's frames): `rate` a second on
 * average, `burst` at once. What a client sends past it is refused without being looked at, so
 * one client's flood costs the service no more than its budget.
 */
export class TokenBucket {
  #tokens: number;
  #at: number;

  constructor(readonly rate: number, readonly burst: number, now = Date.now()) {
    this.#tokens = burst;
    this.#at = now;
  }

  /** Spends one token: false when none is left. */
  take(now = Date.now()): boolean {
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) / 1000) * this.rate);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens--;
    return true;
  }
}
