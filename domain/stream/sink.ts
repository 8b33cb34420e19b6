/**
 * What the stream hub (domain/stream/hub.ts) hands an open event stream, and where it goes: the
 * HTTP edge frames it (routes/event_stream_sse.ts). The hub deals in events, never in bytes.
 */

/**
 * One event as a stream sends it: its place in the team's log (the SSE id), its type, and the
 * envelope webhooks deliver. Batches that share it share its encoding.
 */
export class StreamedEvent {
  #encoded: unknown;

  constructor(readonly id: string, readonly type: string, readonly data: unknown) {}

  /** `encode(this)`, made once for every batch the event is in. */
  encoded<T>(encode: (event: StreamedEvent) => T): T {
    this.#encoded ??= encode(this);
    return this.#encoded as T;
  }
}

/**
 * Events sent together. Streams sent the same events get the same batch, and so share one
 * encoding: a round that reaches a thousand streams encodes each distinct batch once.
 */
export class StreamBatch {
  #encoded: unknown;

  constructor(readonly events: readonly StreamedEvent[]) {}

  /** `encode(events)`, made once for every stream the batch goes to. */
  encoded<T>(encode: (events: readonly StreamedEvent[]) => T): T {
    this.#encoded ??= encode(this.events);
    return this.#encoded as T;
  }
}

/** Where one stream's events go. */
export interface StreamSink {
  /** Sends a batch; settles once the reader has taken it, or is gone. */
  send(batch: StreamBatch): Promise<void>;
  /**
   * Sends a comment (a heartbeat, the reason the stream ends), with how long the client waits
   * before it comes back (`retryMs`), when given.
   */
  note(text: string, retryMs?: number): Promise<void>;
  /** What was sent and the reader has not taken yet, in bytes. */
  readonly unread: number;
  /** Ends the stream once what is queued is sent. */
  end(): Promise<void>;
  /** Ends it now, dropping what is queued: the reader fell too far behind. */
  cutOff(): void;
}
