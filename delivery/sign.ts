import type { Signer } from "../core/signer.ts";
import type { OutboxEvent } from "../core/types.ts";
import type { SignatureScheme } from "../core/webhook_records.ts";
import { envelopeOf } from "../domain/views.ts";

/** The JSON body of a delivery. */
export const envelope = (event: OutboxEvent): string => JSON.stringify(envelopeOf(event));

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

/**
 * The Standard Webhooks signature (standardwebhooks.com): `v1,<base64>` over
 * `<id>.<timestamp>.<body>`, one per secret, space-separated.
 */
export function standardSignature(signers: Signer[], id: string, t: number, body: string) {
  const payload = `${id}.${t}.${body}`;
  return signers.map((s) => `v1,${s.standard(payload)}`).join(" ");
}

/**
 * The headers of one attempt: the event's name and id (X-Service-Event, X-Service-Delivery), and
 * the signatures of the subscription's scheme: ours (X-Service-Signature), the Standard Webhooks
 * ones, which that spec's libraries verify in any language, unchanged, or both. Receivers that
 * HMAC the body alone break on a scheme they did not ask for, so it is the subscription's choice.
 */
export function deliveryHeaders(
  { event, signers, body, scheme }: {
    event: Pick<OutboxEvent, "id" | "type">;
    signers: Signer[];
    body: string;
    scheme: SignatureScheme;
  },
  nowMs = Date.now(),
): Record<string, string> {
  const t = Math.floor(nowMs / 1000);
  return {
    "Content-Type": "application/json",
    "User-Agent": USER_AGENT,
    "X-Service-Event": event.type,
    "X-Service-Delivery": event.id,
    ...(scheme === "standard" ? {} : {
      "X-Service-Signature": signatureHeader(signers, body, nowMs),
    }),
    ...(scheme === "service" ? {} : {
      "webhook-id": event.id,
      "webhook-timestamp": String(t),
      "webhook-signature": standardSignature(signers, event.id, t, body),
    }),
  };
}
