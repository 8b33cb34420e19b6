/**
 * An event stream at the HTTP edge: where the hub's events (domain/stream/hub.ts) become
 * Server-Sent Events, framed as Hono's `writeSSE` frames them. Each event is framed once and each
 * batch joined once, however many streams it goes to.
 *
 * The response body is this sink's own stream, not Hono's `streamSSE`: that one passes every
 * chunk through a TransformStream and a second, pulled stream, and with 1,000 streams hearing 200
 * posts a second (`deno task bench "event stream"`) those hops took the time from a post's answer
 * to its arrival from 27–33 ms to 41–50 ms at the median and from 48–67 ms to 77–88 ms at p99;
 * written straight to the body, 28 and 49 ms.
 */
import type { StreamBatch, StreamedEvent, StreamSink } from "../domain/stream/sink.ts";

const enc = new TextEncoder();

/**
 * An event as an SSE frame: its id, its type, its data on one line (JSON has no newline). A
 * personal notice (an ephemeral message) has no id: it can't be replayed, and a client resuming
 * from its last id must not resume from one.
 */
const frameOf = (e: StreamedEvent) =>
  `${e.id ? `id: ${e.id}\n` : ""}event: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`;

const bytesOf = (events: readonly StreamedEvent[]) =>
  enc.encode(events.map((e) => e.encoded(frameOf)).join(""));

/** What the server reads ahead of the socket; past it, a send waits for the reader. */
const HIGH_WATER_BYTES = 64 * 1024;

/** Why a body errors on purpose (routes/serve.ts logs nothing for it: the hub did). */
export class ReaderCutOff extends Error {
  constructor() {
    super("the reader fell too far behind and was cut off");
  }
}

/**
 * One stream's sink, and its response body. `unread` is what waits in the body for the server to
 * take it to the socket, so that the hub can cut off a reader that stopped reading.
 */
export class SseSink implements StreamSink {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #closed = false;
  /** Sends that wait for the reader to take what is queued. */
  #waiting: (() => void)[] = [];

  /** `gone` is told when the client goes first. */
  constructor(gone: () => void) {
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => void (this.#controller = controller),
      pull: () => this.#wake(),
      cancel: () => {
        this.#closed = true;
        this.#wake();
        gone();
      },
    }, new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_BYTES }));
  }

  get unread(): number {
    return HIGH_WATER_BYTES - (this.#controller.desiredSize ?? HIGH_WATER_BYTES);
  }

  send(batch: StreamBatch): Promise<void> {
    return this.#write(batch.encoded(bytesOf));
  }

  note(text: string, retryMs?: number): Promise<void> {
    const retry = retryMs === undefined ? "" : `retry: ${retryMs}\n`;
    return this.#write(enc.encode(`${retry}: ${text}\n\n`));
  }

  end(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#controller.close();
    }
    this.#wake();
    return Promise.resolve();
  }

  /** An error, not a close: the bytes queued for a reader that may never read them are dropped. */
  cutOff(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#controller.error(new ReaderCutOff());
    this.#wake();
  }

  /** Settles at once while the body has room, else once the reader takes what is queued. */
  #write(bytes: Uint8Array): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#controller.enqueue(bytes);
    if ((this.#controller.desiredSize ?? 0) > 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #wake() {
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
}
