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
  ["conversations.rename", "not_authorized"],
]);

/** What each method calls a refusal because the channel is the general one. */
const GENERAL = new Map([
  ["conversations.archive", "cant_archive_general"],
  ["conversations.kick", "cant_kick_from_general"],
  ["conversations.leave", "cant_leave_general"],
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
      // Kicking someone not in the channel.
      if (/not a member/.test(e.message)) return "not_in_channel";
      if (/user/i.test(e.message)) return "user_not_found";
      return "channel_not_found";
    case 403:
      return forbiddenCode(method, e.message);
    case 422:
      if (field === "blocks") return "invalid_blocks";
      if (field === "body" || field === "text") {
        return e.message.includes("long") ? "msg_too_long" : "no_text";
      }
      if (field === "emoji") return "invalid_name";
      if (field === "name") return nameCode(e.message);
      if ((field === "topic" || field === "purpose") && /longer/.test(e.message)) return "too_long";
      if (field === "channel" && /already archived/.test(e.message)) return "already_archived";
      if (field === "channel" && /not archived/.test(e.message)) return "not_archived";
      if (field === "user_id" && /already a member/.test(e.message)) return "already_in_channel";
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

/** Slack's code for a 403, by what the policy said. */
function forbiddenCode(method: string, message: string): string {
  if (/general channel/.test(message)) return GENERAL.get(method) ?? "restricted_action";
  if (/^A direct message/.test(message)) return "method_not_supported_for_channel_type";
  if (/archived/i.test(message)) return "is_archived";
  if (/^Only the channel's creator/.test(message)) {
    return REFUSED.get(method) ?? "restricted_action";
  }
  if (/member|join|in this channel/i.test(message)) return "not_in_channel";
  return REFUSED.get(method) ?? "restricted_action";
}

/** Slack's codes for a channel's name refused (domain/channels/channels.ts's channelName). */
const nameCode = (message: string) =>
  /already exists/.test(message)
    ? "name_taken"
    : /longer/.test(message)
    ? "invalid_name_maxlength"
    : /letter or digit/.test(message)
    ? "invalid_name_specials"
    : "invalid_name";

/** Slack's codes for a `post_at` refused: gone by, past 120 days, or no time at all. */
const postAtCode = (message: string) =>
  /past/.test(message)
    ? "time_in_past"
    : /120 days/.test(message)
    ? "time_too_far"
    : "invalid_time";
