/** A Server-Sent Events client for the event stream tests: what a stream carried, in order. */
import { waitUntil } from "./webhook_receivers.ts";

export interface StreamEvent {
  id: string;
  event: string;
  // deno-lint-ignore no-explicit-any
  data: any;
}

export interface StreamClient {
  status: number;
  events: StreamEvent[];
  /** Comment lines (`: ...`) and `retry:` values, as they came. */
  comments: string[];
  retry: number | null;
  /** The SSE id of the last event received: what a reconnect sends as Last-Event-ID. */
  lastEventId(): string | null;
  /** Resolves once `n` events came; fails after `timeoutMs`. */
  waitFor(n: number, timeoutMs?: number): Promise<StreamEvent[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): Promise<void>;
  /** Stops reading (the server's queue fills) until `resume`. */
  pause(): void;
  resume(): void;
}

/** Connects to `url` as `token`; `lastEventId` resumes, as a reconnecting EventSource does. */
export async function connect(
  url: string,
  token: string,
  opts: { lastEventId?: string | null } = {},
): Promise<StreamClient & { body: unknown }> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (opts.lastEventId) headers["Last-Event-ID"] = opts.lastEventId;
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const events: StreamEvent[] = [];
  const comments: string[] = [];
  let retry: number | null = null;
  const gate: { paused: PromiseWithResolvers<void> | null } = { paused: null };
  if (!res.ok) {
    const body = await res.json();
    return {
      status: res.status,
      body,
      events,
      comments,
      retry,
      lastEventId: () => null,
      waitFor: () => Promise.reject(new Error(`status ${res.status}`)),
      ended: Promise.resolve(),
      close: () => Promise.resolve(),
      pause() {},
      resume() {},
    };
  }
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const ended = (async () => {
    let buffer = "";
    try {
      for (;;) {
        if (gate.paused) await gate.paused.promise;
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let cut: number;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments.push(line.slice(1).trim());
            else if (line.startsWith("retry: ")) retry = Number(line.slice(7));
            else {
              const at = line.indexOf(": ");
              if (at > 0) fields[line.slice(0, at)] = line.slice(at + 2);
            }
          }
          if (fields.data !== undefined) {
            events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) });
          }
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  return {
    status: res.status,
    body: null,
    events,
    comments,
    get retry() {
      return retry;
    },
    lastEventId: () => events.at(-1)?.id ?? opts.lastEventId ?? null,
    waitFor: (n, timeoutMs = 10_000) =>
      waitUntil(() => events.length >= n, timeoutMs, () => `${n} events (got ${events.length})`)
        .then(() => events),
    ended,
    async close() {
      gate.paused?.resolve();
      controller.abort();
      await ended;
    },
    pause() {
      gate.paused ??= Promise.withResolvers();
    },
    resume() {
      gate.paused?.resolve();
      gate.paused = null;
    },
  };
}
