/**
 * Checking who sent a post to an incoming webhook, as each sender signs: Standard Webhooks
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`), GitHub
 * (`X-Hub-Signature-256: sha256=<hex>` over the body, `X-GitHub-Delivery`) and Stripe
 * (`Stripe-Signature: t=<unix>,v1=<hex>` over `t.body`). Every comparison is constant-time.
 */
import type { VerifyScheme } from "../../core/incoming_records.ts";
import { randomBase62 } from "../../core/random.ts";
import { sameText } from "../../core/same_text.ts";
import { Signer } from "../../core/signer.ts";
import { mintSigningSecret } from "./webhooks.ts";

/** How far a signed timestamp may be from now, either way: older is a replay. */
export const TOLERANCE_S = 300;

/** A post as it reached the hook: the raw body its signature covers. */
export interface SignedPost {
  headers: Headers;
  body: string;
  nowMs: number;
}

/** Why a post was refused, said to its sender (never the expected signature). */
export type Refusal = { refused: string };
/**
 * A post whose signature held: its sender's delivery id, where the scheme has one, and until when
 * the same signed post would be accepted again (its timestamp's tolerance, or from now where the
 * scheme signs none): how long the id must be remembered to refuse a replay.
 */
export type Verified = { deliveryId: string | null; acceptableUntilMs: number };

/**
 * A new verification secret, in the form its sender's tools take: `whsec_…` as our subscriptions'
 * (Standard Webhooks' libraries and Stripe's take it), a plain one for GitHub.
 */
export const mintVerifySecret = (scheme: Exclude<VerifyScheme, "none">): string =>
  scheme === "github" ? randomBase62(40) : mintSigningSecret();

const stale = (seconds: number, nowMs: number) =>
  !Number.isSafeInteger(seconds) || Math.abs(nowMs / 1000 - seconds) > TOLERANCE_S;

const STALE = `The signature's timestamp is more than ${TOLERANCE_S} seconds from now.`;
const FORGED = "The signature does not match the body and this hook's secret.";
const unsigned = (header: string): Refusal => ({ refused: `The post is not signed: ${header}.` });

function standard(post: SignedPost, secrets: string[]): Verified | Refusal {
  const id = post.headers.get("webhook-id");
  const t = post.headers.get("webhook-timestamp");
  const signature = post.headers.get("webhook-signature");
  if (!id || !t || !signature) {
    return unsigned("webhook-id, webhook-timestamp and webhook-signature are required");
  }
  if (!/^\d{1,12}$/.test(t) || stale(Number(t), post.nowMs)) return { refused: STALE };
  const given = signature.split(" ").filter((s) => s.startsWith("v1,")).map((s) => s.slice(3));
  const ok = secrets.some((secret) => {
    const expected = new Signer(secret).standard(`${id}.${t}.${post.body}`);
    return given.some((g) => sameText(g, expected));
  });
  return ok ? { deliveryId: id, acceptableUntilMs: untilMs(Number(t)) } : { refused: FORGED };
}

/** Until when a post signed at `seconds` is within the tolerance. */
const untilMs = (seconds: number) => (seconds + TOLERANCE_S) * 1000;

function github(post: SignedPost, secrets: string[]): Verified | Refusal {
  const signature = post.headers.get("x-hub-signature-256");
  if (!signature?.startsWith("sha256=")) return unsigned("X-Hub-Signature-256 is required");
  const given = signature.slice("sha256=".length);
  const ok = secrets.some((secret) => sameText(given, new Signer(secret).hex(post.body)));
  if (!ok) return { refused: FORGED };
  return {
    deliveryId: post.headers.get("x-github-delivery"),
    acceptableUntilMs: post.nowMs + TOLERANCE_S * 1000,
  };
}

function stripe(post: SignedPost, secrets: string[]): Verified | Refusal {
  const header = post.headers.get("stripe-signature");
  if (!header) return unsigned("Stripe-Signature is required");
  const parts = header.split(",").map((p) => p.split("=", 2));
  const t = parts.find(([k]) => k === "t")?.[1] ?? "";
  const given = parts.filter(([k]) => k === "v1").map(([, v]) => v ?? "");
  if (!/^\d{1,12}$/.test(t) || stale(Number(t), post.nowMs)) return { refused: STALE };
  const ok = secrets.some((secret) => {
    const expected = new Signer(secret).hex(`${t}.${post.body}`);
    return given.some((g) => sameText(g, expected));
  });
  return ok ? { deliveryId: null, acceptableUntilMs: untilMs(Number(t)) } : { refused: FORGED };
}

const CHECKS = { standard, github, stripe };

/** Whether `post` is signed by `scheme` with one of `secrets` (the current one, a rotated one). */
export const checkSignature = (
  scheme: Exclude<VerifyScheme, "none">,
  post: SignedPost,
  secrets: string[],
): Verified | Refusal => CHECKS[scheme](post, secrets);
