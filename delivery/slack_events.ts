/**
 * Slack's wire rules for a request to an app's URL: the headers Bolt's receivers verify (the v0
 * signature with the app's signing secret, and `X-Slack-Retry-Num` / `X-Slack-Retry-Reason` on
 * retries) and Slack's names for why an attempt failed. The body is domain/slack/event_callback.ts's.
 */
import type { DeliveryJob } from "../core/webhook_records.ts";
import type { Signer } from "../core/signer.ts";
import { retryHeaders, SLACK_USER_AGENT, slackSignedHeaders } from "../core/slack_wire.ts";

/**
 * The headers of an attempt to an app: JSON, the v0 signature with its signing secret, and on a
 * retry its number (from 1) and the reason the last attempt failed.
 */
export function slackHeaders(
  { signer, body, nowMs, job }: {
    signer: Signer;
    body: string;
    nowMs: number;
    job: Pick<DeliveryJob, "attempt" | "retry_reason"> | null;
  },
): Record<string, string> {
  return {
    "Content-Type": "application/json",
    "User-Agent": SLACK_USER_AGENT,
    ...slackSignedHeaders((text) => signer.hex(text), body, nowMs),
    ...(job
      ? retryHeaders({ attempt: job.attempt - 1, reason: job.retry_reason ?? "http_error" })
      : {}),
  };
}

/** Slack's reason for a failed attempt, from ours. */
export function retryReasonOf(error: string | null, status: number | null): string {
  if (status !== null) return "http_error";
  if (!error) return "unknown_error";
  if (/timed out/.test(error)) return "http_timeout";
  if (/TLS/.test(error)) return "ssl_error";
  if (/redirect/.test(error)) return "too_many_redirects";
  return "connection_failed";
}
