/**
 * One Socket Mode connection (decisions.md, "Apps without a public URL"): the app's WebSocket on
 * this instance, what it was told on opening (`hello`), its lifetime (`disconnect` with `warning`
 * 10 s before the end and `refresh_requested` at the end), and the envelopes it holds.
 */
import { newId } from "../../../core/ids.ts";
import { TokenBucket } from "../../../core/token_bucket.ts";

/** What the service sends a connection: `hello`, `disconnect`, or an envelope. */
export type SocketMessage = Record<string, unknown>;

/** How long after `refresh_requested` a connection the client did not close is closed. */
const REFRESH_GRACE_MS = 10_000;
/** How long before the end of its life a connection is warned. */
const WARNING_MS = 10_000;
/** Frames a connection may send (decisions.md, "Hardening rules"): 50 a second, bursts of 100. */
const FRAMES_PER_S = 50;
const FRAME_BURST = 100;
/** The largest frame a connection may send. */
export const MAX_FRAME_BYTES = 1024 * 1024;
/**
 * Bytes a connection may send: 1 MiB a second, bursts of 2 MiB. Deno reads and decodes a frame on
 * the thread that serves HTTP, so 50 frames of 1 MiB a second would slow every request; an app's
 * acks, views and answers are kilobytes.
 */
const BYTES_PER_S = 256 * 1024;
const BYTE_BURST = 1024 * 1024;
/** Envelopes of events a connection was sent and may ack, at most; the oldest is forgotten. */
const HELD_MAX = 1_000;

/** Why the service closes a connection. */
export type DisconnectReason =
  | "link_disabled"
  | "too_many_websockets"
  | "refresh_requested"
  | "too_many_messages"
  | "message_too_large";

export class SocketConnection {
  readonly id = newId();
  readonly openedAt = Date.now();
  /** Acks awaited for envelopes a person waits on (commands, interactions), by envelope id. */
  readonly #awaited = new Map<string, (payload: unknown) => void>();
  /** Envelopes of events sent on it and not yet acked: the only event acks it may send. */
  readonly #held = new Set<string>();
  readonly #frames = new TokenBucket(FRAMES_PER_S, FRAME_BURST);
  readonly #bytes = new TokenBucket(BYTES_PER_S, BYTE_BURST);
  readonly #timers: ReturnType<typeof setTimeout>[] = [];
  #closed = false;
  /** Closed for sending past its budget: its token waits before it connects again. */
  overran = false;

  constructor(
    readonly socket: WebSocket,
    readonly app: { appId: string; tokenId: string },
  ) {}

  get open(): boolean {
    return !this.#closed && this.socket.readyState === WebSocket.OPEN;
  }

  /** Sends a message; false when the connection is no longer open. */
  send(message: SocketMessage): boolean {
    if (!this.open) return false;
    try {
      this.socket.send(JSON.stringify(message));
      return true;
    } catch {
      return false;
    }
  }

  /** Ends its life after `lifetimeMs`: warned, then asked to refresh, then closed. */
  live(lifetimeMs: number): void {
    const at = (ms: number, then: () => void) =>
      this.#timers.push(setTimeout(then, Math.max(0, ms)));
    at(lifetimeMs - WARNING_MS, () => this.send({ type: "disconnect", reason: "warning" }));
    at(lifetimeMs, () => this.send({ type: "disconnect", reason: "refresh_requested" }));
    at(lifetimeMs + REFRESH_GRACE_MS, () => this.close(1000, "refresh_requested"));
  }

  /**
   * Whether a frame the app sent may be read: none once it is closing, and past its budget of
   * frames or of size the app is told why and the connection closed, the frame unread.
   */
  admits(data: unknown): boolean {
    if (!this.open) return false;
    if (!this.#frames.take()) return this.#overran("too_many_messages");
    const bytes = frameBytes(data);
    if (bytes > MAX_FRAME_BYTES) return this.#overran("message_too_large");
    if (!this.#bytes.take(bytes)) return this.#overran("too_many_messages");
    return true;
  }

  #overran(reason: "too_many_messages" | "message_too_large"): false {
    this.overran = true;
    this.disconnect(reason);
    return false;
  }

  /** Whether an ack of `envelopeId` is one this connection was asked for (a store write). */
  expects(envelopeId: string): boolean {
    return this.#held.has(envelopeId) || this.#awaited.has(envelopeId);
  }

  /** An event's envelope went out on it: its ack will be taken. */
  holds(envelopeId: string): void {
    this.#held.add(envelopeId);
    if (this.#held.size > HELD_MAX) this.#held.delete(this.#held.values().next().value!);
  }

  /** The event's ack came: true when it was one this connection held (it is then let go). */
  releases(envelopeId: string): boolean {
    return this.#held.delete(envelopeId);
  }

  /** Tells the app why, and closes. */
  disconnect(reason: DisconnectReason): void {
    this.send({ type: "disconnect", reason });
    this.close(1000, reason);
  }

  close(code = 1000, reason = ""): void {
    this.ended();
    try {
      this.socket.close(code, reason);
    } catch {
      // Closed already.
    }
  }

  /** Stops its timers and lets go of what waited on it. */
  ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    for (const done of this.#awaited.values()) done(undefined);
    this.#awaited.clear();
  }

  /** Waits for the ack of an envelope sent on it; undefined when it closed first. */
  awaitAck(envelopeId: string): Promise<unknown> {
    return new Promise((done) => this.#awaited.set(envelopeId, done));
  }

  /** An ack for an awaited envelope: true when it was one (it is then taken). */
  acked(envelopeId: string, payload: unknown): boolean {
    const done = this.#awaited.get(envelopeId);
    if (!done) return false;
    this.#awaited.delete(envelopeId);
    done(payload ?? {});
    return true;
  }

  forget(envelopeId: string): void {
    this.#awaited.delete(envelopeId);
  }
}

/** The UTF-8 length of `text`: a pair of surrogates is 4 bytes, a lone one 3, as encoded. */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else {
      bytes += 2;
      const next = text.charCodeAt(i + 1);
      if (c >= 0xd800 && c < 0xdc00 && next >= 0xdc00 && next < 0xe000) i++;
    }
  }
  return bytes;
}

/**
 * A frame's size in bytes: a text frame's as UTF-8 where it could be near the limit, else its
 * length (at most three times less), so that a frame of ordinary size is not scanned.
 */
function frameBytes(data: unknown): number {
  if (typeof data === "string") {
    const near = data.length * 3 > MAX_FRAME_BYTES && data.length <= MAX_FRAME_BYTES;
    return near ? utf8Length(data) : data.length;
  }
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (data instanceof Blob) return data.size;
  return 0;
}

/**
 * The envelope id a text frame names, found without parsing it (a flood of large frames acking
 * nothing this connection holds costs a scan each, not a parse), or null. Slack's clients write
 * it first; a frame that names it only after a nested one is read as naming the nested one.
 */
export function envelopeIdIn(text: string): string | null {
  const key = text.indexOf('"envelope_id"');
  if (key < 0) return null;
  const value = /^\s*:\s*"([A-Za-z0-9_-]{1,100})"/.exec(text.slice(key + 13, key + 130));
  return value?.[1] ?? null;
}
