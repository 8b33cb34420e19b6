/**
 * Whether the tokens of a process's open streams still hold: an expiry is known from the token
 * and needs no read; a revocation or rotation anywhere changes the tokens version, which every
 * poll reads, and only then are the streams' tokens read again.
 */
import type { Ctx } from "../context.ts";
import { unauthenticated } from "../../core/errors.ts";
import type { Subject } from "../../core/types.ts";
import { tokensByHash, tokensVersion } from "../../kv/tokens.ts";
import { isTokenLive } from "../people/token_format.ts";

/** A stream as the watch needs it. */
export interface Watched {
  /** The hash of the token it was opened with. */
  tokenHash: string;
  /** When that token expires (ms; Infinity: never). */
  expiresAt: number;
}

export class TokenWatch {
  #version: string | null | undefined;
  /** The earliest expiry of a watched token (ms). */
  #nextExpiry = Infinity;

  constructor(private readonly ctx: Ctx) {}

  /**
   * Reads the tokens version, then the token: a revocation after this read changes the version,
   * which the next poll sees (a baseline first taken by a later poll could miss it). Returns when
   * the token expires; a token no longer live is refused with 401.
   */
  async start(subject: Subject): Promise<number> {
    const version = await tokensVersion(this.ctx.kv);
    const [entry] = await tokensByHash(this.ctx.kv, [subject.token_hash ?? ""]);
    if (!isTokenLive(entry.value, Date.now())) {
      throw unauthenticated("The token is invalid, revoked or expired.");
    }
    this.#version ??= version;
    const expiresAt = entry.value?.expires_at ? Date.parse(entry.value.expires_at) : Infinity;
    this.#nextExpiry = Math.min(this.#nextExpiry, expiresAt);
    return expiresAt;
  }

  /**
   * The streams of `streams` whose token expired, from memory: an expiry changes nothing in the
   * store, so no read would tell.
   */
  expired<S extends Watched>(streams: S[], now = Date.now()): S[] {
    if (now < this.#nextExpiry) return [];
    this.#nextExpiry = streams.reduce(
      (next, s) => s.expiresAt > now ? Math.min(next, s.expiresAt) : next,
      Infinity,
    );
    return streams.filter((s) => s.expiresAt <= now);
  }

  /** The streams of `streams` whose token was revoked or rotated since the last poll. */
  async revoked<S extends Watched>(streams: S[]): Promise<S[]> {
    const version = await tokensVersion(this.ctx.kv);
    if (this.#version === undefined || version === this.#version) {
      this.#version = version;
      return [];
    }
    const hashes = [...new Set(streams.map((s) => s.tokenHash))];
    const read = await tokensByHash(this.ctx.kv, hashes);
    // Only once they are read: a failed read is tried again by the next poll.
    this.#version = version;
    const now = Date.now();
    const valid = new Set(hashes.filter((_, i) => isTokenLive(read[i].value, now)));
    return streams.filter((s) => !valid.has(s.tokenHash));
  }
}
