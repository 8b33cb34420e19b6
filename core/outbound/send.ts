import type { Connector } from "./connector.ts";
import type { Resolver } from "../dns.ts";
import { resolveTarget, UnsafeUrlError } from "../url_safety.ts";

/** Enough of a response body to keep the connection reusable; the rest is never read. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** The start of the receiver's answer that a Delivery record keeps, to say why it refused. */
const KEPT_RESPONSE_BYTES = 1024;

/** What one attempt came to. `error` is short and fixed-vocabulary: it never echoes a URL. */
export interface AttemptOutcome {
  succeeded: boolean;
  response_status: number | null;
  error: string | null;
  /**
   * The start of the receiver's answer (at most KEPT_RESPONSE_BYTES, as text), null when it sent
   * none. It is the receiver's own text: the request carried no secret, only signatures.
   */
  response_body: string | null;
  /** The Retry-After of a 429 or 503, in milliseconds. */
  retryAfterMs: number | null;
}

export interface SendOptions {
  connector: Connector;
  timeoutMs: number;
  allowPrivate: boolean;
  resolver?: Resolver;
  /**
   * How much of the answer to keep as `response_body` (KEPT_RESPONSE_BYTES unless told): an app's
   * answer to a command is read whole, up to MAX_RESPONSE_BYTES.
   */
  keepBytes?: number;
  /** Ends the attempt early (the process is closing), as a timeout would. */
  signal?: AbortSignal;
}

class Timeout extends Error {}

/**
 * POSTs one signed delivery. Never throws: every way it can go wrong becomes an outcome. The
 * timeout covers everything: DNS, connecting, the response head and the bit of body we read.
 */
export async function send(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: SendOptions,
): Promise<AttemptOutcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Timeout()), opts.timeoutMs);
  const { signal } = controller;
  const closing = () => controller.abort(opts.signal!.reason);
  opts.signal?.addEventListener("abort", closing);
  try {
    const target = await resolveTarget(url, {
      allowPrivate: opts.allowPrivate,
      resolver: opts.resolver,
      signal,
    });
    return await opts.connector.with(target, async (client) => {
      const res = await fetch(target.url, {
        method: "POST",
        headers,
        body,
        redirect: "manual",
        signal,
        client,
      });
      return outcomeOf(res, await startOf(res.body, opts.keepBytes ?? KEPT_RESPONSE_BYTES));
    });
  } catch (e) {
    return failed(null, describe(e, signal, opts.timeoutMs));
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", closing);
  }
}

function outcomeOf(res: Response, responseBody: string | null): AttemptOutcome {
  const status = res.status;
  if (status >= 200 && status < 300) {
    return {
      succeeded: true,
      response_status: status,
      error: null,
      response_body: responseBody,
      retryAfterMs: null,
    };
  }
  const outcome = failed(
    status,
    status >= 300 && status < 400 ? `redirect (HTTP ${status}) not followed` : `HTTP ${status}`,
  );
  outcome.response_body = responseBody;
  if (status === 429 || status === 503) {
    outcome.retryAfterMs = parseRetryAfter(res.headers.get("Retry-After"));
  }
  return outcome;
}

const failed = (status: number | null, error: string): AttemptOutcome => ({
  succeeded: false,
  response_status: status,
  error,
  response_body: null,
  retryAfterMs: null,
});

/**
 * Reads at most MAX_RESPONSE_BYTES, then drops the stream: a huge body is never buffered. Returns
 * its first `keep` bytes as text (a character cut in two at the end is left out), or null when
 * there was none.
 */
async function startOf(
  stream: ReadableStream<Uint8Array> | null,
  keep: number,
): Promise<string | null> {
  if (!stream) return null;
  const reader = stream.getReader();
  const limit = Math.min(keep, MAX_RESPONSE_BYTES);
  const kept = new Uint8Array(limit);
  let seen = 0;
  try {
    while (seen < MAX_RESPONSE_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      if (seen < limit) kept.set(value.subarray(0, limit - seen), seen);
      seen += value.byteLength;
    }
  } catch {
    // The status is what counts; a body that breaks off after it changes nothing.
  }
  await reader.cancel().catch(() => {});
  const text = new TextDecoder().decode(kept.subarray(0, Math.min(seen, limit)), {
    stream: true,
  });
  return text === "" ? null : text;
}

/** Retry-After as delta-seconds or an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** A short, secret-free reason. Runtime messages carry the URL, so they are only classified. */
function describe(e: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (e instanceof UnsafeUrlError) return e.message;
  if (signal.reason instanceof Timeout) return `timed out after ${timeoutMs / 1000}s`;
  const text = String((e as Error)?.cause ?? "") + " " + String((e as Error)?.message ?? e);
  const known: [RegExp, string][] = [
    [/refused/i, "connection refused"],
    [/reset/i, "connection reset"],
    [/certificate|tls|handshake/i, "TLS error"],
    [/dns|lookup|resolve/i, "DNS lookup failed"],
    [/closed|incomplete|eof|broken pipe/i, "connection closed before a response"],
  ];
  return known.find(([pattern]) => pattern.test(text))?.[1] ?? "request failed";
}
