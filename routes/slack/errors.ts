/**
 * Refusals in Slack's words (decisions.md, "The Slack Web API subset"): the domain's errors, the
 * same the REST API answers with, named by Slack's codes as its clients test for them.
 */
import type { ApiError } from "../../core/errors.ts";

/** A Web API refusal: its Slack code, and the domain's error it stands for, if any. */
export class SlackError extends Error {
  constructor(readonly code: string, readonly source?: unknown) {
    super(code);
  }
}

/** What each method calls a refusal of its own action (403) that isn't about the channel. */
const REFUSED = new Map([
  ["chat.update", "cant_update_message"],
  ["chat.delete", "cant_delete_message"],
  ["chat.appendStream", "cant_update_message"],
  ["chat.stopStream", "cant_update_message"],
]);

/** Slack's codes for a refusal on one field. */
const FIELD_CODES = new Map([
  ["trigger_id", "expired_trigger_id"],
  ["hash", "hash_conflict"],
  ["push", "push_limit_reached"],
  ["user_id", "user_not_found"],
  ["external_id", "duplicate_external_id"],
  // Streams (domain/messages/streams.ts): one that stopped, or one never named.
  ["ts", "message_not_in_streaming_state"],
  ["recipient_team_id", "missing_recipient_team_id"],
]);

/** The Slack code for a domain error met by `method`. */
export function slackCodeOf(method: string, e: ApiError): string {
  const field = e.errors ? Object.keys(e.errors)[0] : null;
  switch (e.status) {
    case 401:
      return "invalid_auth";
    case 404:
      if (method === "users.lookupByEmail") return "users_not_found";
      if (/scheduled/.test(e.message)) return "invalid_scheduled_message_id";
      if (/Home/.test(e.message)) return "not_enabled";
      if (/view/i.test(e.message)) return "not_found";
      if (/message/i.test(e.message)) return "message_not_found";
      if (/user/i.test(e.message)) return "user_not_found";
      return "channel_not_found";
    case 403:
      if (/archived/i.test(e.message)) return "is_archived";
      if (/member|join|in this channel/i.test(e.message)) return "not_in_channel";
      return REFUSED.get(method) ?? "restricted_action";
    case 422:
      if (field === "blocks") return "invalid_blocks";
      if (field === "body" || field === "text") {
        return e.message.includes("long") ? "msg_too_long" : "no_text";
      }
      if (field === "emoji") return "invalid_name";
      if (field === "post_at") return postAtCode(e.message);
      if (field === "recipient_user_id") {
        return /^Name/.test(e.message) ? "missing_recipient_user_id" : "user_not_found";
      }
      if (field === "markdown_text" && /at most/.test(e.message)) return "msg_too_long";
      if (field && FIELD_CODES.has(field)) return FIELD_CODES.get(field)!;
      // As at Slack, a deleted message is not found, whatever is asked of it.
      if (field === "message" && /deleted/i.test(e.message)) return "message_not_found";
      if (field === "message" && /pinned already/.test(e.message)) return "already_pinned";
      if (field === "message" && /not pinned/.test(e.message)) return "no_pin";
      if (field === "message" && REFUSED.has(method)) return REFUSED.get(method)!;
      return "invalid_arguments";
    case 503:
      return "internal_error";
  }
  return "invalid_arguments";
}

/** Slack's codes for a `post_at` refused: gone by, past 120 days, or no time at all. */
const postAtCode = (message: string) =>
  /past/.test(message)
    ? "time_in_past"
    : /120 days/.test(message)
    ? "time_too_far"
    : "invalid_time";
