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

/** An incoming webhook: a secret URL that posts into one channel as one bot. */
export interface IncomingWebhook {
  id: string;
  team_id: string;
  channel_id: string;
  bot_id: string;
  /** Copied from the bot (users never change), so a post through the hook costs one read. */
  bot_name: string;
  name: string;
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  hash: string;
  created_at: string;
  revoked_at: string | null;
  /** Whose signature a post must carry (domain/webhooks/incoming_verify.ts); absent: none. */
  verify?: IncomingVerification;
}
