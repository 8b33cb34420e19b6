import type { Attachment, Block } from "./types.ts";

/**
 * A message to post later (chat.scheduleMessage), checked when scheduled and posted at `post_at`
 * by its author's token as it then stands (domain/messages/scheduled.ts).
 */
export interface ScheduledMessage {
  id: string;
  team_id: string;
  channel_id: string;
  author_id: string;
  /** The key of the token that scheduled it: read again when it is posted. */
  token_hash: string;
  /** Unix seconds. */
  post_at: number;
  /** Unix seconds. */
  created_at: number;
  body: string;
  blocks: Block[] | null;
  attachments?: Attachment[];
  thread_root_id: string | null;
  sent_to_channel: boolean;
  /** An app's metadata, posted with it. */
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
}
