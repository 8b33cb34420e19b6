/**
 * Slack's wire, as the service speaks it to apps, in one place: the request signature, the 3
 * seconds an app has to answer, the User-Agent, a retry's attempt and reason (as HTTP headers and as
 * Socket Mode fields), and the Socket Mode envelope. Events (delivery/), commands, presses and
 * their answers (domain/apps/, delivery/apps/sender.ts) and Socket Mode's queue all take it from
 * here, so no two of them can disagree.
 */
import { createHmac } from "node:crypto";

/**
 * How long an app has to answer what it is sent (an event's HTTP answer, a command's or press's,
 * an envelope's ack): Slack's 3 seconds.
 */
export const SLACK_ANSWER_MS = 3_000;

/** What Slack's requests to apps say they are; apps that log or filter by it see Slack's. */
export const SLACK_USER_AGENT = "Slackbot 1.0 (+https://api.slack.com/robots)";

/** A retry: which attempt this is (0: the first) and Slack's word for why the last failed. */
export interface SlackRetry {
  attempt: number;
  reason: string;
}

/** A retry as HTTP headers (`X-Slack-Retry-Num`, `X-Slack-Retry-Reason`); none on a first try. */
export const retryHeaders = ({ attempt, reason }: SlackRetry): Record<string, string> =>
  attempt > 0 ? { "X-Slack-Retry-Num": String(attempt), "X-Slack-Retry-Reason": reason } : {};

/**
 * A Socket Mode envelope (api.slack.com/apis/socket-mode): what it carries, its id (acked by the
 * app), whether its ack may carry an answer (commands and interactions; not events), and the
 * retry, in Socket Mode's spelling (`retry_attempt`, `retry_reason`: 0 and "" on a first try).
 */
export function socketEnvelope(
  { envelopeId, type, payload, answers, retry }: {
    envelopeId: string;
    type: string;
    payload: unknown;
    answers: boolean;
    retry: SlackRetry;
  },
) {
  return {
    envelope_id: envelopeId,
    type,
    payload,
    accepts_response_payload: answers,
    retry_attempt: retry.attempt,
    retry_reason: retry.attempt > 0 ? retry.reason : "",
  };
}

/*
 * The request signature (api.slack.com/authentication/verifying-requests-from-slack): what the
 * service sends an app carries `X-Slack-Request-Timestamp` and `X-Slack-Signature: v0=<hex
 * HMAC-SHA256 of "v0:{timestamp}:{body}" keyed by the app's signing secret>`, so Bolt's receivers
 * verify it unchanged.
 */

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
