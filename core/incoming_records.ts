/**
 * Incoming webhooks that check who sends (decisions.md, "Events that describe themselves,
 * signatures others verify"): the schemes a post may have to be signed with, as stored.
 */

/** `none`: anyone with the URL posts. The others: as Standard Webhooks, GitHub or Stripe sign. */
export const VERIFY_SCHEMES = ["none", "standard", "github", "stripe"] as const;
export type VerifyScheme = (typeof VERIFY_SCHEMES)[number];

/** How a hook checks its posts' senders; its secrets sealed under APP_KEY, never shown again. */
export interface IncomingVerification {
  scheme: Exclude<VerifyScheme, "none">;
  secret: string;
  /** The secret a rotation replaced: it still verifies until `previous_expires_at`. */
  previous_secret: string | null;
  previous_expires_at: string | null;
}
