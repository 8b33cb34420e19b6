import type {
  Attachment,
  Block,
  Channel,
  MemberRef,
  Message,
  MessageType,
  Poll,
} from "../../core/types.ts";
import { newId } from "../../core/ids.ts";

/** Notices the service writes itself: nobody edits, deletes or reacts to them. */
export const isSystem = (m: Pick<Message, "type">) =>
  m.type === "member_joined" || m.type === "member_left";

export interface DraftInput {
  channel: Channel;
  author: MemberRef;
  body: string;
  blocks?: Block[] | null;
  attachments?: Attachment[] | null;
  poll?: Poll | null;
  /** The thread root's `ts`, when this is a thread reply. */
  thread_ts?: string | null;
  type: MessageType;
  reply_to_id?: string | null;
  thread_root_id?: string | null;
  sent_to_channel?: boolean;
  client_uuid?: string | null;
  /** The names its body mentions (domain/messages/mentions.ts). */
  mention_names?: Record<string, string>;
  metadata?: Message["metadata"] | null;
  stream?: Message["stream"];
}

/** A new message before it has a place in its timeline or thread. */
export function draftMessage(input: DraftInput): Message {
  const now = Date.now();
  const threadRoot = input.thread_root_id ?? null;
  return {
    id: newId(now),
    channel_id: input.channel.id,
    team_id: input.channel.team_id,
    body: input.body,
    blocks: input.blocks ?? null,
    ...(input.attachments ? { attachments: input.attachments } : {}),
    ...(input.poll ? { poll: input.poll } : {}),
    ...(input.mention_names ? { mention_names: input.mention_names } : {}),
    ...(input.metadata ? { metadata: input.metadata } : {}),
    ...(input.stream ? { stream: input.stream } : {}),
    ...(threadRoot ? { thread_ts: input.thread_ts ?? null } : {}),
    type: input.type,
    author: input.author,
    reply_to_id: input.reply_to_id ?? null,
    thread_root_id: threadRoot,
    sent_to_channel: threadRoot !== null && (input.sent_to_channel ?? false),
    reactions: [],
    created_at: new Date(now).toISOString(),
    edited_at: null,
    deleted_at: null,
    client_uuid: input.client_uuid ?? null,
    timeline_pos: null,
    thread_pos: null,
  };
}
