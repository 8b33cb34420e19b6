/**
 * The registrations that hold a token to its cap of open streams across every instance
 * (kv/stream/stream_registry.ts), as one process keeps them: registered one at a time per token,
 * renewed with every heartbeat, dropped in gathered commits, and held while the server still
 * holds a connection cut off for a slow reader.
 */
import type { Ctx } from "../context.ts";
import { ApiError } from "../../core/errors.ts";
import { KeyedLock } from "../../core/keyed_lock.ts";
import { errorFields, log } from "../../core/log.ts";
import { retrying } from "../../core/retry.ts";
import {
  dropStreams,
  registerStream,
  renewStreams,
  type StreamRef,
} from "../../kv/stream/stream_registry.ts";

/** Open streams one token may hold, across all instances. */
export const MAX_STREAMS_PER_TOKEN = 10;
/**
 * Open streams one user may hold with all its tokens together, across all instances: what bounds
 * the connections one person can pin (a cut-off stream counts until the server lets go of it).
 */
export const MAX_STREAMS_PER_USER = 20;
/** A comment line this often keeps proxies from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;
/** A registration lasts this long unless renewed (every heartbeat). */
const REGISTRATION_MS = 3 * HEARTBEAT_MS;

export class StreamRegistrations {
  readonly #registering = new KeyedLock();
  readonly #toDrop: StreamRef[] = [];
  #dropped: Promise<void> = Promise.resolve();
  /** Streams cut off whose connections the server still holds: they count until gone. */
  readonly #held = new Set<StreamRef>();

  constructor(private readonly ctx: Ctx) {}

  /** Connections held after their streams were cut off. */
  get held(): number {
    return this.#held.size;
  }

  /**
   * Registers a stream of the token, or refuses with 429 when the token or its user holds its cap
   * already.
   */
  async register(ref: StreamRef): Promise<void> {
    // One at a time per user here: a client opening its streams at once would only conflict.
    const registered = await this.#registering.run(
      ref.userId,
      () =>
        retrying("open event stream", () =>
          registerStream(this.ctx.kv, ref, {
            expiresAt: Date.now() + REGISTRATION_MS,
            max: { token: MAX_STREAMS_PER_TOKEN, user: MAX_STREAMS_PER_USER },
          })),
    );
    if (registered === true) return;
    const which = registered === "token"
      ? `A token may hold at most ${MAX_STREAMS_PER_TOKEN} open event streams`
      : `A user may hold at most ${MAX_STREAMS_PER_USER} open event streams with all its tokens`;
    throw new ApiError(
      429,
      `${which}; close one first (a stream cut off for reading too slowly counts until its ` +
        "connection closes).",
      undefined,
      { "Retry-After": String(HEARTBEAT_MS / 1000) },
    );
  }

  /** Renews the registrations of `open` streams and of held connections. */
  async renew(open: StreamRef[]): Promise<void> {
    await renewStreams(this.ctx.kv, [...open, ...this.#held], Date.now() + REGISTRATION_MS)
      .catch((e) => log.error("stream: renewing registrations failed", errorFields(e)));
  }

  /** Keeps counting `ref` until `done` (the server let go of its connection), then drops it. */
  hold(ref: StreamRef, done: Promise<void>, released: () => void): void {
    this.#held.add(ref);
    void done.finally(() => {
      this.#held.delete(ref);
      released();
      return this.drop([ref]);
    });
  }

  /**
   * Drops registrations, gathering those of streams that end while a drop is under way into the
   * next one (many clients leaving at once cost a few commits, not one each). Settles once they
   * are dropped, or failed to be (a registration left behind runs out by itself).
   */
  drop(refs: StreamRef[]): Promise<void> {
    const first = this.#toDrop.length === 0;
    this.#toDrop.push(...refs);
    if (!first) return this.#dropped;
    this.#dropped = this.#dropped.then(() =>
      dropStreams(this.ctx.kv, this.#toDrop.splice(0))
        .catch((e) => log.error("stream: dropping registrations failed", errorFields(e)))
    );
    return this.#dropped;
  }

  /** Settles once the drops asked for so far are done. */
  get settled(): Promise<void> {
    return this.#dropped;
  }
}
