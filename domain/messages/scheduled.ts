/**
 * Messages posted later (decisions.md, "More of the Web API": chat.scheduleMessage,
 * chat.deleteScheduledMessage, chat.scheduledMessages.list). A scheduled message is checked as a
 * post is when it is scheduled (the channel, the body, the thread) and posted at its time by
 * domain/messages/scheduled_posting.ts, exactly once: the post's commit deletes its record.
 */
import type { Ctx } from "../context.ts";
import type { Subject } from "../../core/types.ts";
import type { ScheduledMessage } from "../../core/scheduled_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { newId, storedId } from "../../core/ids.ts";
import { retrying } from "../../core/retry.ts";
import {
  deleteScheduled,
  getScheduled,
  insertScheduled,
  userScheduled,
} from "../../kv/scheduled.ts";
import { loadChannelWith } from "../channels/access.ts";
import { bodyAndBlocks, type NewMessage } from "./messages.ts";
import { parseMetadata } from "./metadata.ts";

/** How far ahead a message may be scheduled, as at Slack. */
export const MAX_AHEAD_S = 120 * 24 * 3600;

/** What chat.scheduleMessage asks for. */
export interface NewScheduled {
  channelId: string;
  /** Unix seconds. */
  postAt: number;
  message: Pick<NewMessage, "body" | "blocks" | "attachments" | "sent_to_channel" | "metadata">;
  threadRootId: string | null;
}

function checkPostAt(postAt: number, now: number): void {
  if (!Number.isFinite(postAt)) {
    throw invalid("post_at", "post_at must be a time in Unix seconds.");
  }
  if (postAt <= now) throw invalid("post_at", "post_at is in the past.");
  if (postAt > now + MAX_AHEAD_S) {
    throw invalid("post_at", "post_at may be at most 120 days ahead.");
  }
}

/** Schedules a message where the subject may post now; it is checked as a post would be. */
export async function scheduleMessage(
  ctx: Ctx,
  subject: Subject,
  { channelId, postAt, message, threadRootId }: NewScheduled,
): Promise<ScheduledMessage> {
  const now = Math.floor(Date.now() / 1000);
  const at = Math.floor(postAt);
  const read = await loadChannelWith(ctx, subject, channelId, { action: "channel.post" });
  checkPostAt(at, now);
  const { body, blocks, attachments } = bodyAndBlocks(message, "text");
  const metadata = parseMetadata(message.metadata);
  const scheduled: ScheduledMessage = {
    id: newId(),
    team_id: subject.team_id,
    channel_id: read.channel.id,
    author_id: subject.user_id,
    token_hash: subject.token_hash ?? "",
    post_at: at,
    created_at: now,
    body,
    blocks,
    ...(attachments ? { attachments } : {}),
    thread_root_id: threadRootId,
    sent_to_channel: message.sent_to_channel ?? false,
    ...(metadata ? { metadata } : {}),
  };
  await insertScheduled(ctx.kv, scheduled);
  return scheduled;
}

const noSuch = () =>
  notFound("No such scheduled message: it was posted or deleted, or is not yours.");

/** Deletes one of the subject's scheduled messages in `channelId` before it is posted. */
export async function unscheduleMessage(
  ctx: Ctx,
  subject: Subject,
  { channelId, id }: { channelId: string; id: string },
): Promise<void> {
  await retrying("delete scheduled message", async () => {
    const stored = storedId(id);
    const entry = stored ? await getScheduled(ctx.kv, stored) : null;
    const m = entry?.value;
    if (!m || m.author_id !== subject.user_id || m.channel_id !== channelId) throw noSuch();
    return await deleteScheduled(ctx.kv, entry as Deno.KvEntry<ScheduledMessage>) || null;
  });
}

/**
 * The subject's scheduled messages, soonest first: in `channelId` only when given, and with
 * `post_at` within `oldest` and `latest` (Unix seconds) when given.
 */
export async function listScheduled(
  ctx: Ctx,
  subject: Subject,
  { channelId, oldest, latest }: { channelId?: string; oldest?: number; latest?: number },
): Promise<ScheduledMessage[]> {
  const mine = (await userScheduled(ctx.kv, subject.user_id)).map((e) => e.value);
  const given = (n: number | undefined): n is number => n !== undefined && Number.isFinite(n);
  return mine
    .filter((m) => !channelId || m.channel_id === channelId)
    .filter((m) => !given(oldest) || m.post_at >= oldest)
    .filter((m) => !given(latest) || m.post_at <= latest)
    .sort((a, b) => a.post_at - b.post_at || (a.id < b.id ? -1 : 1));
}
