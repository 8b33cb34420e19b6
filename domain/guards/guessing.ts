import { ApiError, ConflictError } from "../../core/errors.ts";
import { LockKind } from "../../core/memory.ts";
import { log } from "../../core/log.ts";
import { rateLimited, secretMisses } from "../../core/metrics.ts";
import { claimRequests } from "../../kv/service/rate_counts.ts";
import type { Store } from "../../kv/store/store.ts";

/** Misses one client address may make on secret URLs in a minute, across all instances. */
export const MAX_MISSES_PER_MINUTE = 60;
const WINDOW_MS = 60_000;
/** One claim of an address's misses at a time in a process. */
const MISS_CLAIMS = new LockKind("guessing misses");

/** Where a secret is guessed at: an incoming webhook's URL, a sign-in link, an app's secrets. */
export type SecretSurface =
  | "incoming_webhook"
  | "login_link"
  | "client_secret"
  | "oauth_code"
  | "response_url"
  /** A verifying incoming webhook's signature: a refused one (401) is a miss, as a forgery. */
  | "incoming_signature"
  /** An operator's request to the admin path (routes/admin.ts): a refused one (401) is a miss. */
  | "admin_signature";

/**
 * Secret URLs can't be guessed at speed. A lookup whose secret matches nothing (the 404) counts a
 * miss against the client's address, in a one-minute window every instance shares; past
 * MAX_MISSES_PER_MINUTE the address gets 429 on secret URLs until the window ends, whatever it
 * sends, so a guess that would have been right tells it nothing.
 *
 * Each miss is claimed in the store one at a time (a commit per miss, at most 60 an address and
 * minute), so the limit is exact across instances; once an instance has seen the window used up
 * it refuses that address without asking the store again (another instance learns it at the
 * address's next miss there). A process claims one miss of an address at a time, so its own
 * guesses don't contend for the count; a claim that still can't land (other instances' guesses
 * contending for it) is refused as past the limit: guessing that fast gets 429, never a 5xx.
 */
export class GuessGuard {
  /** Addresses known to have used up a window, with that window. */
  readonly #blocked = new Map<string, number>();

  constructor(private readonly kv: Store) {}

  /**
   * Runs `lookup` for `address` unless it missed too often this minute (429). A 404 from it (a 401
   * for a signature) is a miss: counted, and answered with the 429 once the address is past the
   * limit.
   */
  async lookup<T>(address: string, surface: SecretSurface, lookup: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const window = Math.floor(now / WINDOW_MS);
    if (this.#blocked.get(address) === window) throw this.#refuse(now, window);
    try {
      return await lookup();
    } catch (e) {
      const missed = surface === "incoming_signature" || surface === "admin_signature" ? 401 : 404;
      if (!(e instanceof ApiError) || e.status !== missed) throw e;
      secretMisses.inc({ surface });
      const claim = await this.kv.lock(MISS_CLAIMS).run(address, () =>
        claimRequests(
          this.kv,
          window,
          `miss:${address}`,
          (claimed) => claimed < MAX_MISSES_PER_MINUTE ? 1 : 0,
        ).catch((conflict) => {
          if (conflict instanceof ConflictError) return { claimed: 0, won: 0 };
          throw conflict;
        }));
      if (claim.claimed >= MAX_MISSES_PER_MINUTE) this.#block(address, surface, window);
      throw claim.won > 0 ? e : this.#refuse(now, window);
    }
  }

  #block(address: string, surface: SecretSurface, window: number) {
    if (this.#blocked.size > 10_000) this.#blocked.clear();
    this.#blocked.set(address, window);
    log.warn("guessing: too many unknown secrets from one address; refusing it this minute", {
      address,
      surface,
      limit: MAX_MISSES_PER_MINUTE,
    });
  }

  #refuse(now: number, window: number): ApiError {
    rateLimited.inc({ kind: "guessing" });
    const retryAfter = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    return new ApiError(
      429,
      "Too many requests for unknown links from your address; wait a minute.",
      undefined,
      { "Retry-After": String(retryAfter) },
    );
  }
}
