import type { OutboxEvent } from "../domain/types.ts";

const enc = new TextEncoder();

/** The JSON body of a delivery: the same bytes for every attempt and subscription. */
export function envelope(event: OutboxEvent): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: event.created_at,
    data: event.data,
  });
}

/** The HMAC-SHA256 key for a signing secret: the whole `whsec_…` string is the key. */
export async function signingKey(secret: string): Promise<CryptoKey> {
  return await crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
}

/**
 * `t=<unix seconds>,v1=<hex>[,v1=<hex>]`: one v1 per key (the current secret first, then the
 * one being rotated out), each over `<t>.<body>`.
 */
export async function signatureHeader(
  keys: CryptoKey[],
  body: string,
  nowMs = Date.now(),
): Promise<string> {
  const t = Math.floor(nowMs / 1000);
  const payload = enc.encode(`${t}.${body}`);
  const macs = await Promise.all(keys.map((k) => crypto.subtle.sign("HMAC", k, payload)));
  return [`t=${t}`, ...macs.map((m) => `v1=${new Uint8Array(m).toHex()}`)].join(",");
}

/** The headers of one attempt. */
export async function deliveryHeaders(
  event: Pick<OutboxEvent, "id" | "type">,
  keys: CryptoKey[],
  body: string,
  nowMs = Date.now(),
): Promise<Record<string, string>> {
  return {
    "Content-Type": "application/json",
    "X-Service-Event": event.type,
    "X-Service-Delivery": event.id,
    "X-Service-Signature": await signatureHeader(keys, body, nowMs),
  };
}
