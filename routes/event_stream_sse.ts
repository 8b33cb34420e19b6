/**
 * An event stream at the HTTP edge: Hono's `streamSSE` carries it, and this is where events
 * become Server-Sent Events. The hub (domain/stream_hub.ts) hands over batches of events; each
 * event is framed once and each batch joined once, however many streams it goes to.
 */
import type { SSEStreamingApi } from "hono/streaming";
import type { StreamBatch, StreamedEvent, StreamSink } from "../domain/stream_sink.ts";

const enc = new TextEncoder();

/** An event as an SSE frame (as Hono's writeSSE frames one): its id, its type, its data. */
const frameOf = (e: StreamedEvent) =>
  `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`;

const bytesOf = (events: readonly StreamedEvent[]) =>
  enc.encode(events.map((e) => e.encoded(frameOf)).join(""));

/**
 * One stream's sink. What is written waits in the stream until the server takes it for the
 * socket: `unread` counts it, so that the hub can cut off a reader that stopped reading.
 */
export class SseSink implements StreamSink {
  #unread = 0;

  constructor(private readonly sse: SSEStreamingApi) {}

  get unread(): number {
    return this.#unread;
  }

  send(batch: StreamBatch): Promise<void> {
    return this.#write(batch.encoded(bytesOf));
  }

  note(text: string, retryMs?: number): Promise<void> {
    const retry = retryMs === undefined ? "" : `retry: ${retryMs}\n`;
    return this.#write(enc.encode(`${retry}: ${text}\n\n`));
  }

  async end(): Promise<void> {
    await this.sse.close();
  }

  cutOff(): void {
    this.sse.abort();
  }

  /** Settles once the server took the bytes (or the stream is gone: Hono drops them then). */
  async #write(bytes: Uint8Array): Promise<void> {
    this.#unread += bytes.length;
    try {
      await this.sse.write(bytes);
    } finally {
      this.#unread -= bytes.length;
    }
  }
}
