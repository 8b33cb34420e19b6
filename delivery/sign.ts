import { createHmac } from "node:crypto";
import type { OutboxEvent } from "../domain/types.ts";

/** Bodies by event: the subscriptions of one event share its copy (delivery/latest.ts). */
const bodies = new WeakMap<OutboxEvent, string>();

/** The JSON body of a delivery: the same bytes for every attempt and subscription. */
export function envelope(event: OutboxEvent): string {
  let body = bodies.get(event);
  if (body === undefined) {
    body = JSON.stringify({
      id: event.id,
      type: event.type,
      created_at: event.created_at,
      data: event.data,
    });
    bodies.set(event, body);
  }
  return body;
}

/**
 * HMAC-SHA256 keyed by the whole `whsec_…` string. node:crypto rather than Web Crypto: it signs
 * in place, where crypto.subtle hops to a worker thread and back for every signature (measured
 * at 8 µs against 36 µs per signature).
 */
export class Signer {
  /** Private, so an inspected or logged Signer never shows it. */
  readonly #secret: string;

  constructor(secret: string) {
    this.#secret = secret;
  }

  /** The MAC of `message` (UTF-8), in hex. */
  hex(message: string): string {
    return createHmac("sha256", this.#secret).update(message).digest("hex");
  }
}

/**
 * `t=<unix seconds>,v1=<hex>[,v1=<hex>]`: one v1 per secret (the current one first, then the
 * one being rotated out), each over `<t>.<body>`.
 */
export function signatureHeader(signers: Signer[], body: string, nowMs = Date.now()): string {
  const t = Math.floor(nowMs / 1000);
  const payload = `${t}.${body}`;
  return [`t=${t}`, ...signers.map((s) => `v1=${s.hex(payload)}`)].join(",");
}

/** Who receivers see calling: the product, not the runtime. */
export const USER_AGENT = "TeamChat-Webhooks/1";

/** The headers of one attempt. */
export function deliveryHeaders(
  event: Pick<OutboxEvent, "id" | "type">,
  signers: Signer[],
  body: string,
  nowMs = Date.now(),
): Record<string, string> {
  return {
    "Content-Type": "application/json",
    "User-Agent": USER_AGENT,
    "X-Service-Event": event.type,
    "X-Service-Delivery": event.id,
    "X-Service-Signature": signatureHeader(signers, body, nowMs),
  };
}
