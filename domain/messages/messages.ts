import type { Ctx } from "../context.ts";
import type {
  Attachment,
  Block,
  Channel,
  MemberRef,
  Message,
  MessageType,
  Subject,
} from "../../core/types.ts";
import { blocksText, parseBlocks } from "./blocks.ts";
import { parseMetadata } from "./metadata.ts";
import { rendered } from "./stream_render.ts";
import type { MessageStream } from "../../core/stream_records.ts";
import { openStream } from "../../kv/apps/open_streams.ts";
import { parseAttachments } from "./attachments.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { messageTs } from "../../core/ids.ts";
import { checksOf, loadChannelWith, reusingFirst } from "../channels/access.ts";
import { messageIn, messageKeyFor } from "./access.ts";
import { cleanBody } from "./body.ts";
import { draftMessage } from "./draft.ts";
import { pollOf } from "./new_poll.ts";
import { mentionNames } from "./mentions.ts";
import { peek, type Settled, unwrap } from "../../core/settled.ts";
import { retrying } from "../../core/retry.ts";
import { keys } from "../../kv/keys.ts";
import { getMessage } from "../../kv/messages.ts";
import type { Plan } from "../../kv/store/plan.ts";
import { messageEvent, metadataOf } from "./message_events.ts";
import { type Audience, audienceOf, emit } from "../webhooks/audience.ts";
import { LockKind } from "../../core/memory.ts";
import { type Once, type Posting, USED_UP_GONE, type UsedUp } from "./post_guards.ts";

/** The fields of POST /channels/{channel}/messages, shape-checked at the edge. */
export interface NewMessage {
  /** Required unless `blocks` carry text: then the blocks' plain text is the body. */
  body?: string | null;
  /** Block Kit blocks as given; checked here (domain/messages/blocks.ts). */
  blocks?: unknown;
  /** Slack's attachments as given; checked here (domain/messages/attachments.ts). */
  attachments?: unknown;
  client_uuid?: string | null;
  reply_to_id?: string | null;
  thread_root_id?: string | null;
  sent_to_channel?: boolean | null;
  /** A poll's options: the message is then of type `poll`, its body the question. */
  poll?: { options: string[]; multiple?: boolean | null } | null;
  /** Set by the service only: the root of an agent's thread (domain/apps/agents.ts). */
  agent_thread?: boolean;
  /** An app's `{ event_type, event_payload }`, as an object or JSON text (metadata.ts). */
  metadata?: unknown;
  /** Set by the service only: a streamed reply's start, heard of at its stop (streams.ts). */
  stream?: MessageStream;
}

export interface Posted {
  message: Message;
  /** True when the client_uuid was used before: this is the original, nothing was written. */
  replayed: boolean;
}

const authorOf = (s: Subject): MemberRef => ({ id: s.user_id, name: s.name, type: s.type });

/**
 * Posts with the same author and client_uuid wait for each other, so the second finds the
 * first's key instead of racing it for a position. Across processes the key's check in the
 * commit still lets exactly one win; the loser re-reads and replays.
 */
const POST_LOCKS = new LockKind("posts by client_uuid");

/** A message in its channel, as a request names it. */
export interface MessageRef {
  channelId: string;
  messageId: string;
}

/**
 * POST /channels/{channel}/messages: one commit holds the message, its list copies, its
 * client_uuid key and its `message.created` event. `input` is the body as read; its error
 * surfaces only after the 404 and 403 checks, on `bodyField` (the name the client gave it).
 */
export function postMessage(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  input: Settled<NewMessage>,
): Promise<Posted> {
  return postMessageWith(ctx, subject, { channelId, input, bodyField: "body" });
}

/**
 * `postMessage`, with the body's errors named `bodyField` (an incoming webhook's `text`); and,
 * with `author`, a message written by someone else where the subject may post: an app's reply
 * to a command the subject ran (the app's bot is its author, wherever the subject ran it).
 */
export async function postMessageWith(
  ctx: Ctx,
  subject: Subject,
  { channelId, input, bodyField, author, usedUp, once }: {
    channelId: string;
    input: Settled<NewMessage>;
    bodyField: string;
    author?: MemberRef;
    usedUp?: UsedUp;
    once?: Once;
  },
): Promise<Posted> {
  const early = peek(input);
  const given = early?.client_uuid;
  const clientUuid = given || crypto.randomUUID();
  const attempt = (reuse?: boolean) =>
    postOnce(ctx, {
      subject,
      channelId,
      input,
      clientUuid,
      given: !!given,
      bodyField,
      reuse,
      author: author ?? authorOf(subject),
      usedUp,
      once,
    });
  // Only a commit that checks all a post read lets it reuse: a reply's target is read, unchecked.
  const replies = early?.reply_to_id || early?.thread_root_id;
  const post = () => retrying("post message", replies ? () => attempt() : reusingFirst(attempt));
  if (!given) return await post();
  return await ctx.kv.lock(POST_LOCKS).run(`${subject.user_id}:${given}`, post);
}

/** One try at a post, as `postMessage` asked for it. */
interface PostTry {
  subject: Subject;
  channelId: string;
  input: Settled<NewMessage>;
  clientUuid: string;
  /** Whether the client chose the client_uuid. */
  given: boolean;
  bodyField: string;
  /** Whether it may start from the reads last made for a post (see loadChannelWith). */
  reuse: boolean | undefined;
  author: MemberRef;
  usedUp: UsedUp | undefined;
  once: Once | undefined;
}

async function postOnce(
  ctx: Ctx,
  { subject, channelId, input, clientUuid, given, bodyField, reuse, author, usedUp, once }: PostTry,
): Promise<Posted | null> {
  const early = peek(input);
  const read = await loadChannelWith<
    { used: string; replyTo: Message; root: Message; record: unknown; seen: Posting }
  >(ctx, subject, channelId, {
    extra: {
      // Reusing assumes the key unused: the commit requires it absent, so a resend reads again.
      used: given && !reuse ? keys.clientUuid(subject.user_id, clientUuid) : null,
      replyTo: messageKeyFor(early?.reply_to_id),
      root: messageKeyFor(early?.thread_root_id),
      record: usedUp?.key ?? null,
      seen: once?.key ?? null,
    },
    audience: true,
    action: "channel.post",
    reads: reuse ? "reused" : "fresh",
  });
  const { channel } = read;
  const fields = unwrap(input);
  const { body, blocks, attachments } = contentOf(fields, bodyField);
  const poll = fields.poll ? pollOf(fields.poll) : null;
  const metadata = parseMetadata(fields.metadata);
  const { used, replyTo, root, record, seen } = read.extra;
  if (used.value) return { message: await original(ctx, channel, used.value), replayed: true };
  if (seen.value && seen.value.until > Date.now()) {
    return { message: await original(ctx, channel, seen.value.message_id), replayed: true };
  }
  if (usedUp && record.versionstamp === null) throw notFound(USED_UP_GONE);
  if (fields.reply_to_id) liveStandard("reply_to_id", channel, replyTo.value);
  if (fields.thread_root_id) {
    liveStandard("thread_root_id", channel, root.value);
    if (root.value?.thread_root_id) {
      throw invalid(
        "thread_root_id",
        "Threads are one level deep: a thread reply can't be a root.",
      );
    }
  }
  const draft = draftMessage({
    channel,
    author,
    body,
    blocks,
    attachments,
    poll,
    type: fields.agent_thread ? "assistant_thread" : poll ? "poll" : "standard",
    reply_to_id: fields.reply_to_id,
    thread_root_id: fields.thread_root_id,
    thread_ts: root.value ? messageTs(root.value) : null,
    sent_to_channel: fields.sent_to_channel ?? false,
    client_uuid: clientUuid,
    mention_names: await mentionNames(ctx.kv, { teamId: channel.team_id, body }),
    metadata,
    stream: fields.stream,
  });
  const audience = await audienceOf(ctx, channel, read.versions);
  const created = ctx.kv.atomic();
  await announce(ctx, created, { draft, audience });
  if (usedUp) { for (const key of [usedUp.key, ...usedUp.alsoDelete]) created.delete(key); }
  if (once) {
    const posting: Posting = { message_id: draft.id, until: Date.now() + once.forMs };
    created.set(once.key, posting, { expireIn: once.forMs });
  }
  const stored = await ctx.kv.append(draft, {
    checks: [
      ...checksOf(read),
      ...audience.checks,
      ...(usedUp ? [record] : []),
      ...(once ? [seen] : []),
    ],
    with: created,
    indexClientUuid: given,
  });
  return stored && { message: stored, replayed: false };
}

/** What a post's commit tells: its event; a stream's start, nobody yet (streams.ts). */
async function announce(
  ctx: Ctx,
  op: Plan,
  { draft, audience }: { draft: Message; audience: Audience },
): Promise<void> {
  if (draft.stream) return openStream(op, draft);
  emit(op, audience, messageEvent("message.created", draft, await metadataOf(ctx, draft)));
}

/** What a post says: a stream's start, what its chunks so far say (stream_render.ts). */
const contentOf = (fields: NewMessage, bodyField: string): ReturnType<typeof bodyAndBlocks> =>
  fields.stream ? rendered(fields.stream) : bodyAndBlocks(fields, bodyField);

/**
 * A message's body, blocks and attachments as written: blocks and attachments are checked (422 on
 * their field, with pointers); without a body, their plain text is the body (422 on `bodyField`
 * when none has text).
 */
export function bodyAndBlocks(
  fields: Pick<NewMessage, "body" | "blocks" | "attachments">,
  bodyField = "body",
): { body: string; blocks: Block[] | null; attachments?: Attachment[] } {
  const blocks = parseBlocks(fields.blocks);
  const attachments = parseAttachments(fields.attachments);
  // As at Slack, an empty text beside blocks or attachments is no text (Bolt for Python sends
  // `text=""`).
  const given = (blocks || attachments) && !fields.body?.trim()
    ? blocksText({ blocks, attachments })
    : fields.body ?? "";
  return {
    body: cleanBody(given, bodyField),
    blocks,
    ...(attachments ? { attachments } : {}),
  };
}

/** The message a reused client_uuid created; a key is tied to the channel it was used in. */
async function original(ctx: Ctx, channel: Channel, messageId: string): Promise<Message> {
  const message = (await getMessage(ctx.kv, messageId)).value;
  if (!message) throw new Error(`client_uuid points at missing message ${messageId}`);
  if (message.channel_id !== channel.id) {
    throw invalid("client_uuid", "This client_uuid was already used in another channel.");
  }
  return message;
}

/** A reply or thread target: a live `standard` message of this channel, else 422 on `field`. */
function liveStandard(field: string, channel: Channel, target: Message | null) {
  if (
    !target || target.channel_id !== channel.id || !ANSWERABLE.has(target.type) ||
    target.deleted_at !== null
  ) {
    throw invalid(field, `The ${field} must be the id of a live message in this channel.`);
  }
}

/** What a reply may answer: an authored message, or an agent's thread. */
const ANSWERABLE = new Set<MessageType>(["standard", "assistant_thread"]);

/** GET /channels/{channel}/messages/{message}: any message of a channel the subject sees. */
export async function showMessage(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  messageId: string,
): Promise<Message> {
  const read = await loadChannelWith<{ message: Message }>(ctx, subject, channelId, {
    extra: { message: messageKeyFor(messageId) },
  });
  return messageIn(read.channel, read.extra.message).value;
}
