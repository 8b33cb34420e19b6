/**
 * Slack's request signature (api.slack.com/authentication/verifying-requests-from-slack): what
 * the service sends an app carries `X-Slack-Request-Timestamp` and `X-Slack-Signature:
 * v0=<hex HMAC-SHA256 of "v0:{timestamp}:{body}" keyed by the app's signing secret>`, so Bolt's
 * receivers verify it unchanged. The one place the format is written: events (with the delivery
 * engine's cached key) and commands and presses (with the secret) both sign here.
 */
import { createHmac } from "node:crypto";

/** The two headers, with `hmacHex` computing the HMAC-SHA256 of a text as hex. */
export function slackSignedHeaders(
  hmacHex: (text: string) => string,
  body: string,
  nowMs = Date.now(),
): Record<string, string> {
  const ts = Math.floor(nowMs / 1000);
  return {
    "X-Slack-Request-Timestamp": String(ts),
    "X-Slack-Signature": `v0=${hmacHex(`v0:${ts}:${body}`)}`,
  };
}

/** The two headers, signed with the app's signing secret. */
export const slackSignatureHeaders = (signingSecret: string, body: string, nowMs = Date.now()) =>
  slackSignedHeaders(
    (text) => createHmac("sha256", signingSecret).update(text).digest("hex"),
    body,
    nowMs,
  );
