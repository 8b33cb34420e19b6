/**
 * What Slack's clients expect to read (decisions.md, "The Slack Web API subset"): messages,
 * channels and users in Slack's shapes, built from our records. Ids are ours (UUIDs); a message
 * is named by its `ts`; a bot's messages carry its `bot_id` (the bot user's id) so that an app
 * can tell its own apart, as Bolt's `ignoreSelf` does.
 */
import type { Channel, Message, User } from "../../core/types.ts";
import { isActive } from "../../core/active.ts";
import { isClosed, kindOf } from "../../core/channel_kind.ts";
import { type StoredMessageView, storedMessageView } from "../views.ts";
import { slackEmojiName } from "../messages/emoji_names.ts";
import { tsOfIso } from "../../core/ids.ts";

/** Seconds since the epoch, as Slack gives `created`. */
const unix = (iso: string | null) => iso ? Math.floor(Date.parse(iso) / 1000) : 0;

const SUBTYPES: Partial<Record<Message["type"], string>> = {
  member_joined: "channel_join",
  member_left: "channel_leave",
  assistant_thread: "assistant_app_thread",
};

/**
 * A stored message as Slack's `conversations.history` gives one (its thread's `ts` with it, and
 * who reacted, where the caller read them).
 */
export const slackMessage = (
  m: Message,
  { threadTs, reactors, metadata }: {
    threadTs?: string | null;
    reactors?: Map<string, string[]>;
    /** Whether its metadata is given (`include_all_metadata`, a post's own answer). */
    metadata?: boolean;
  } = {},
): Record<string, unknown> => ({
  ...slackMessageOf(storedMessageView(m), {
    teamId: m.team_id,
    threadTs: threadTs ?? m.thread_ts ?? null,
    reactors,
  }),
  ...(metadata && m.metadata && !m.deleted_at ? { metadata: m.metadata } : {}),
});

/**
 * A message as Slack gives one, from the API's Message (what events carry): `threadTs` is its
 * thread root's `ts`, when it is a thread reply and that is known.
 */
export function slackMessageOf(
  view: StoredMessageView,
  { teamId, threadTs, reactors }: {
    teamId: string;
    threadTs: string | null;
    reactors?: Map<string, string[]>;
  },
): Record<string, unknown> {
  const subtype = SUBTYPES[view.type];
  return {
    type: "message",
    ...(subtype ? { subtype } : {}),
    ts: view.ts,
    user: view.author.id,
    ...(view.author.type === "bot" ? { bot_id: view.author.id } : {}),
    text: view.body,
    ...(view.blocks ? { blocks: view.blocks } : {}),
    ...(view.attachments ? { attachments: view.attachments } : {}),
    ...(threadTs ? { thread_ts: threadTs } : {}),
    ...(view.edited_at ? { edited: { user: view.author.id, ts: tsOfIso(view.edited_at) } } : {}),
    team: teamId,
    ...(view.reactions.length > 0
      ? {
        reactions: view.reactions.map((r) => ({
          name: slackEmojiName(r.emoji),
          count: r.count,
          users: reactors?.get(r.emoji) ?? [],
        })),
      }
      : {}),
  };
}

/** A channel as Slack's `conversations.info` gives one. */
export function slackChannel(c: Channel, isMember: boolean): Record<string, unknown> {
  const isPrivate = isClosed(c);
  return {
    id: c.id,
    name: c.slug,
    name_normalized: c.slug,
    is_channel: !isPrivate,
    is_group: kindOf(c) === "private",
    is_im: c.is_direct,
    is_mpim: false,
    is_private: isPrivate,
    is_archived: c.is_archived,
    is_general: c.is_general,
    is_member: isMember,
    is_shared: false,
    is_ext_shared: false,
    is_org_shared: false,
    created: unix(c.created_at),
    creator: c.created_by ?? "",
    topic: { value: c.topic ?? "", creator: "", last_set: 0 },
    purpose: { value: c.purpose ?? "", creator: "", last_set: 0 },
  };
}

/** A person or bot as Slack's `users.info` gives one. */
/** Slack's user object; `profile.email` only for a token that may read addresses. */
export function slackUser(u: User, showEmail = false): Record<string, unknown> {
  return {
    id: u.id,
    team_id: u.team_id,
    name: u.name,
    real_name: u.name,
    deleted: !isActive(u),
    is_bot: u.type === "bot",
    is_app_user: false,
    is_admin: u.role === "admin" || u.role === "owner",
    is_owner: u.role === "owner",
    tz: "UTC",
    updated: unix(u.created_at),
    profile: slackProfile(u, showEmail),
  };
}

/** Slack's profile of a user (`users.profile.get`, and `users.info`'s `profile`). */
export function slackProfile(u: User, showEmail = false): Record<string, unknown> {
  return {
    real_name: u.name,
    real_name_normalized: u.name,
    display_name: u.name,
    display_name_normalized: u.name,
    status_text: "",
    status_emoji: "",
    ...(u.type === "bot" ? { bot_id: u.id } : {}),
    ...(showEmail && u.email ? { email: u.email } : {}),
  };
}
