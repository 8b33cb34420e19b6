/**
 * A budget of work per unit of time for one client (a connection's frames, or their bytes): `rate`
 * a second on average, `burst` at once. What a client sends past it is refused without being looked at, so
 * one client's flood costs the service no more than its budget.
 */
export class TokenBucket {
  #tokens: number;
  #at: number;

  constructor(readonly rate: number, readonly burst: number, now = Date.now()) {
    this.#tokens = burst;
    this.#at = now;
  }

  /** Spends `cost` tokens: false when fewer are left. */
  take(cost = 1, now = Date.now()): boolean {
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) / 1000) * this.rate);
    this.#at = now;
    if (this.#tokens < cost) return false;
    this.#tokens -= cost;
    return true;
  }
}
