/** Changing a message after it was posted: editing its text and blocks, deleting it. */
import type { Ctx } from "../context.ts";
import type { EventType, Message, Subject } from "../../core/types.ts";
import type { Plan } from "../../kv/store/plan.ts";
import { invalid } from "../../core/errors.ts";
import { nowIso } from "../../core/ids.ts";
import { loadChannelWith } from "../channels/access.ts";
import { MESSAGE_LOCKS, messageIn, messageKeyFor } from "./access.ts";
import { authorize } from "../policy.ts";
import { type Settled, unwrap } from "../../core/settled.ts";
import { retrying } from "../../core/retry.ts";
import { replaceMessage } from "../../kv/messages.ts";
import { audienceOf, emit } from "../webhooks/audience.ts";
import { deleteUnder } from "../../kv/store/commit.ts";
import { keys } from "../../kv/keys.ts";
import { planErasure } from "./erasure.ts";
import { bodyAndBlocks, type MessageRef, type NewMessage } from "./messages.ts";
import { messageEvent, metadataOf } from "./message_events.ts";
import { closeStream } from "../../kv/apps/open_streams.ts";
import { mentionNames } from "./mentions.ts";
import { parseMetadata } from "./metadata.ts";

/** A message the subject may edit or delete (the policy), with what its commit must re-check. */
export async function loadOwn(
  ctx: Ctx,
  subject: Subject,
  { channelId, messageId }: MessageRef,
  action: "message.edit" | "message.delete" | "agent.retitle" | "message.stream",
) {
  const read = await loadChannelWith<{ message: Message }>(ctx, subject, channelId, {
    extra: { message: messageKeyFor(messageId) },
    audience: true,
  });
  const entry = messageIn(read.channel, read.extra.message);
  authorize(subject, action, {
    channel: read.channel,
    isMember: read.isMember,
    message: entry.value,
  });
  const audience = await audienceOf(ctx, read.channel, read.versions);
  return {
    entry,
    message: entry.value,
    checks: [entry, read.entry, ...audience.checks],
    audience,
  };
}

/**
 * PATCH: replaces the body (and the blocks, as given: none given clears them), sets `edited_at`
 * and fires `message.updated`, even when the text is the same: the interface promises
 * `edited_at` set on every edit's answer.
 */
export async function editMessage(
  ctx: Ctx,
  subject: Subject,
  { channelId, messageId }: MessageRef,
  input: Settled<Pick<NewMessage, "body" | "blocks" | "attachments" | "metadata">>,
): Promise<Message> {
  return await ctx.kv.lock(MESSAGE_LOCKS).run(
    messageId,
    () =>
      retrying("edit message", async () => {
        const { message, checks, audience } = await loadOwn(
          ctx,
          subject,
          { channelId, messageId },
          "message.edit",
        );
        if (message.type === "poll") throw invalid("body", "A poll's question can't be edited.");
        if (message.type !== "standard") {
          throw invalid("message", "Only a standard message can be edited.");
        }
        if (message.deleted_at) throw invalid("message", "A deleted message can't be edited.");
        if (message.stream) {
          throw invalid("message", "The message is being streamed: stop its stream first.");
        }
        const fields = unwrap(input);
        return await rewrite(ctx, { message, checks, audience }, {
          ...bodyAndBlocks(fields),
          metadata: parseMetadata(fields.metadata),
        });
      }),
  );
}

/**
 * `assistant.threads.setTitle`: the agent's thread `ref` (its root, which its person wrote)
 * takes `title` as its text, changed as an edit is (`message.updated`).
 */
export async function retitle(ctx: Ctx, subject: Subject, ref: MessageRef, title: string) {
  return await ctx.kv.lock(MESSAGE_LOCKS).run(
    ref.messageId,
    () =>
      retrying("name a thread", async () => {
        const loaded = await loadOwn(ctx, subject, ref, "agent.retitle");
        if (loaded.message.deleted_at) throw invalid("thread_ts", "The thread was deleted.");
        return await rewrite(ctx, loaded, { body: title, blocks: null });
      }),
  );
}

/**
 * The message with new text, in one commit that fires `event` (`message.updated` by default; a
 * stream's stop fires `message.created`, its appends nothing); null: lost a race.
 */
export async function rewrite(
  ctx: Ctx,
  { message, checks, audience }: Pick<
    Awaited<ReturnType<typeof loadOwn>>,
    "message" | "checks" | "audience"
  >,
  { body, blocks, attachments, metadata, stream }: {
    body: string;
    blocks: Message["blocks"];
    attachments?: Message["attachments"];
    /** Undefined: kept as it is; null: taken away. */
    metadata?: Message["metadata"] | null;
    /** Undefined: none (an edit ends nothing); a stream's state while it goes on. */
    stream?: Message["stream"];
  },
  { event = "message.updated", also }: {
    event?: EventType | null;
    /** More for the commit, made from the message as it will be. */
    also?: (op: Plan, next: Message) => void | Promise<void>;
  } = {},
): Promise<Message | null> {
  const names = await mentionNames(ctx.kv, { teamId: message.team_id, body });
  const { mention_names: _old, metadata: was, stream: _stream, ...kept } = message;
  const now = metadata === undefined ? was : metadata;
  const next: Message = {
    ...kept,
    body,
    blocks,
    attachments: attachments ?? null,
    // A stream's appends and its stop are its writing, not an edit of it.
    edited_at: message.stream ? message.edited_at : nowIso(),
    ...(names ? { mention_names: names } : {}),
    ...(now ? { metadata: now } : {}),
    ...(stream ? { stream } : {}),
  };
  const op = ctx.kv.atomic().check(...checks);
  if (event) emit(op, audience, messageEvent(event, next, await metadataOf(ctx, next)));
  await also?.(op, next);
  const done = await replaceMessage(op, next);
  return done ? next : null;
}

/**
 * DELETE: leaves a tombstone in place (body "", reactions cleared, `edited_at` kept) and fires
 * `message.deleted`. A tombstone deleted again changes nothing and fires nothing.
 */
export async function deleteMessage(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  messageId: string,
): Promise<void> {
  await ctx.kv.lock(MESSAGE_LOCKS).run(messageId, () =>
    retrying("delete message", async () => {
      const { message, checks, audience } = await loadOwn(
        ctx,
        subject,
        { channelId, messageId },
        "message.delete",
      );
      if (message.deleted_at) return true;
      const { mention_names: _names, ...kept } = message;
      const next: Message = {
        ...kept,
        body: "",
        blocks: null,
        attachments: null,
        poll: null,
        reactions: [],
        deleted_at: nowIso(),
      };
      const op = ctx.kv.atomic().check(...checks).delete(keys.pin(message.channel_id, message.id));
      emit(op, audience, messageEvent("message.deleted", next, await metadataOf(ctx, message)));
      // A reply deleted while it streams: its stream ends with it.
      if (message.stream) closeStream(op, message);
      const rest = await planErasure(ctx.kv, op, next);
      const done = await replaceMessage(op, next);
      if (!done) return null;
      await rest();
      const id = message.id;
      await deleteUnder(ctx.kv, [keys.reactions(id), keys.pollVotes(id), keys.pollBallots(id)]);
      return true;
    }));
}
