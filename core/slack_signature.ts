/**
 * Slack's request signature (api.slack.com/authentication/verifying-requests-from-slack): what
 * the service sends an app carries `X-Slack-Request-Timestamp` and `X-Slack-Signature:
 * v0=<hex HMAC-SHA256 of "v0:{timestamp}:{body}" keyed by the app's signing secret>`, so Bolt's
 * receivers verify it unchanged.
 */
import { createHmac } from "node:crypto";

export function slackSignatureHeaders(
  signingSecret: string,
  body: string,
  nowMs = Date.now(),
): Record<string, string> {
  const ts = Math.floor(nowMs / 1000);
  const mac = createHmac("sha256", signingSecret).update(`v0:${ts}:${body}`).digest("hex");
  return { "X-Slack-Request-Timestamp": String(ts), "X-Slack-Signature": `v0=${mac}` };
}
