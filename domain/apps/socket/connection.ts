/**
 * One Socket Mode connection (decisions.md, "Apps without a public URL"): the app's WebSocket on
 * this instance, what it was told on opening (`hello`), its lifetime (`disconnect` with `warning`
 * 10 s before the end and `refresh_requested` at the end), and the envelopes it holds.
 */
import { newId } from "../../../core/ids.ts";

/** What the service sends a connection: `hello`, `disconnect`, or an envelope. */
export type SocketMessage = Record<string, unknown>;

/** How long after `refresh_requested` a connection the client did not close is closed. */
const REFRESH_GRACE_MS = 10_000;
/** How long before the end of its life a connection is warned. */
const WARNING_MS = 10_000;

export class SocketConnection {
  readonly id = newId();
  readonly openedAt = Date.now();
  /** Acks awaited for envelopes a person waits on (commands, interactions), by envelope id. */
  readonly #awaited = new Map<string, (payload: unknown) => void>();
  readonly #timers: ReturnType<typeof setTimeout>[] = [];
  #closed = false;

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

  /** Tells the app why, and closes. */
  disconnect(reason: "link_disabled" | "too_many_websockets" | "refresh_requested"): void {
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
