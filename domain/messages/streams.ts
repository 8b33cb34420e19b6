/**
 * Streamed replies (decisions.md, "Slack's agents": "Streamed replies"): `chat.startStream` posts
 * a real message that nobody hears of yet, `chat.appendStream` adds to it (each addition rewrites
 * it and reaches the person it streams to on their live stream, with no event row), and
 * `chat.stopStream` ends it: then subscriptions, the feed and other apps hear `message.created`,
 * once, with the whole message. A stream never stopped is stopped by the service after 10 minutes.
 */
import type { Ctx } from "../context.ts";
import type { Block, Message, Subject } from "../../core/types.ts";
import type { MessageStream } from "../../core/stream_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { retrying } from "../../core/retry.ts";
import { Periodic } from "../../core/periodic.ts";
import { CacheKind } from "../../core/memory.ts";
import { MESSAGE_LOCKS } from "./access.ts";
import { loadOwn, rewrite } from "./changes.ts";
import { messageIdByTs } from "./by_ts.ts";
import { postMessageWith } from "./messages.ts";
import { parseBlocks } from "./blocks.ts";
import { parseMetadata } from "./metadata.ts";
import { parseChunks, rendered, withChunks } from "./stream_render.ts";
import { listMembers } from "../../kv/channels.ts";
import { planNotice, relayNotice, sealNotice } from "../../kv/ephemeral.ts";
import type { Plan } from "../../kv/store/plan.ts";
import { newId } from "../../core/ids.ts";
import { closeStream, streamsStartedBefore } from "../../kv/apps/open_streams.ts";
import { getUser } from "../../kv/workspace.ts";
import { loadChannel } from "../channels/access.ts";
import { subjectOfPerson } from "../principals.ts";
import { messageView } from "../views.ts";

/** How long a stream may go on unstopped before the service stops it. */
export const STREAM_MS = 10 * 60_000;

/** What a stream's calls add: text, and chunks (`markdown_text`, `task_update`, ...). */
export interface StreamContent {
  markdownText?: string;
  chunks?: unknown;
}

/** Where a stream is: its channel, and its message's `ts`. */
export interface StreamRef {
  channelId: string;
  ts: string;
}

const notStreaming = () =>
  invalid("ts", "The message is not being streamed: its stream stopped, or never started.");

/**
 * chat.startStream: the reply as a thread reply (`threadTs`) in `channelId`. Outside a direct
 * channel it streams to one person of the team (`recipientUserId`, `recipientTeamId`).
 */
export async function startStream(
  ctx: Ctx,
  subject: Subject,
  { channelId, threadTs, recipientUserId, recipientTeamId, mode, content }: {
    channelId: string;
    threadTs: string;
    recipientUserId?: string;
    recipientTeamId?: string;
    mode?: MessageStream["mode"];
    content: StreamContent;
  },
): Promise<Message> {
  const { channel } = await loadChannel(ctx, subject, channelId, "channel.post");
  let recipient: string | null = null;
  if (channel.is_direct) {
    const members = await listMembers(ctx.kv, channel.id);
    recipient = members.find((m) => m.id !== subject.user_id)?.id ?? null;
  } else {
    if (!recipientUserId) throw invalid("recipient_user_id", "Name whom the reply streams to.");
    if (!recipientTeamId) throw invalid("recipient_team_id", "Name the recipient's team.");
    const person = await getUser(ctx.kv, recipientUserId);
    if (!person || person.team_id !== subject.team_id || recipientTeamId !== subject.team_id) {
      throw invalid("recipient_user_id", "No such person in this team.");
    }
    recipient = person.id;
  }
  const stream = withChunks({
    started_at: new Date().toISOString(),
    recipient_user_id: recipient,
    mode: mode ?? "timeline",
    text: "",
    tasks: [],
    plan_title: null,
    blocks: [],
  }, { markdownText: content.markdownText, chunks: parseChunks(content.chunks) });
  const root = await messageIdByTs(ctx, subject, { channelId: channel.id, ts: threadTs });
  const { message } = await postMessageWith(ctx, subject, {
    channelId: channel.id,
    input: { ok: true, value: { thread_root_id: root, stream } },
    bodyField: "markdown_text",
  });
  if (recipient) {
    await relayNotice(ctx, message.team_id, streamingNotice(message, content, recipient));
  }
  return message;
}

/** chat.appendStream: more of the reply, to its person's live stream at once. */
export async function appendStream(
  ctx: Ctx,
  subject: Subject,
  ref: StreamRef,
  content: StreamContent,
): Promise<Message> {
  const chunks = parseChunks(content.chunks);
  return await change(ctx, subject, ref, {
    next: (loaded) => {
      const stream = withChunks(loaded.stream!, { markdownText: content.markdownText, chunks });
      return { ...rendered(stream), stream };
    },
    // Told in the commit that writes it: one commit an addition.
    options: { event: null, also: (op, next) => tellInCommit(ctx, op, { next, content }) },
  });
}

/**
 * chat.stopStream: the reply's last words, blocks after them (a feedback row, say) and its
 * metadata; everyone hears of it now, as of a message just posted.
 */
export function stopStream(
  ctx: Ctx,
  subject: Subject,
  ref: StreamRef,
  { blocks, metadata, ...content }: StreamContent & { blocks?: unknown; metadata?: unknown },
): Promise<Message> {
  const chunks = parseChunks(content.chunks);
  const closing = parseBlocks(blocks) ?? [];
  const meta = parseMetadata(metadata);
  return change(ctx, subject, ref, {
    next: (loaded) => {
      const stream = withChunks(loaded.stream!, { markdownText: content.markdownText, chunks });
      return { ...rendered(stream, { closing }), metadata: meta };
    },
    options: { event: "message.created", also: closeStream },
  });
}

/**
 * Streams' messages by channel and `ts`, which never change: an addition reads the message
 * itself, whose commit checks it, and not the `ts` index again each time.
 */
const STREAM_IDS = new CacheKind<string>("streams by ts", 10_000);

/** The id of the message a stream's `ref` names: remembered, or read with the channel's access. */
async function streamIdOf(ctx: Ctx, subject: Subject, ref: StreamRef): Promise<string> {
  const known = ctx.kv.cache(STREAM_IDS);
  const key = `${ref.channelId}:${ref.ts}`;
  const id = known.get(key) ?? await messageIdByTs(ctx, subject, ref);
  known.set(key, id);
  return id;
}

/** The streaming message `ref` names, changed by `next` in one commit, as `rewrite` does. */
async function change(
  ctx: Ctx,
  subject: Subject,
  ref: StreamRef,
  { next, options }: {
    next: (m: Message) => Parameters<typeof rewrite>[2];
    options: Parameters<typeof rewrite>[3];
  },
): Promise<Message> {
  const messageId = await streamIdOf(ctx, subject, ref);
  return await ctx.kv.lock(MESSAGE_LOCKS).run(
    messageId,
    () =>
      retrying("stream a reply", async () => {
        const loaded = await loadOwn(
          ctx,
          subject,
          { channelId: ref.channelId, messageId },
          "message.stream",
        );
        if (!loaded.message.stream || loaded.message.deleted_at) throw notStreaming();
        if (Date.parse(loaded.message.stream.started_at) + STREAM_MS <= Date.now()) {
          throw notStreaming();
        }
        return await rewrite(ctx, loaded, next(loaded.message), options);
      }),
  );
}

/** What its person is told of an addition to a reply: the addition, and the reply so far. */
const streamingNotice = (message: Message, content: StreamContent, to: string) => ({
  user_id: to,
  channel_id: message.channel_id,
  type: "message.streaming",
  data: {
    appended: {
      ...(content.markdownText ? { markdown_text: content.markdownText } : {}),
      ...(content.chunks ? { chunks: content.chunks } : {}),
    },
    message: messageView(message),
  },
});

/** Tells the reply's person of an addition in the commit `op` that writes it. */
async function tellInCommit(
  ctx: Ctx,
  op: Plan,
  { next, content }: { next: Message; content: StreamContent },
) {
  const to = next.stream?.recipient_user_id;
  if (!to) return;
  const notice = { id: newId(), ...streamingNotice(next, content, to) };
  planNotice(op, next.team_id, await sealNotice(ctx.keyring, notice));
}

/**
 * Stops every stream started more than 10 minutes before `now`, as its app would have with no
 * more to say: what it said is what everyone hears of. How many it stopped.
 */
export async function stopStaleStreams(ctx: Ctx, now = Date.now()): Promise<number> {
  let stopped = 0;
  for (const [messageId, open] of await streamsStartedBefore(ctx.kv, now - STREAM_MS)) {
    const author = await getUser(ctx.kv, open.author_id);
    if (!author) continue;
    const subject = subjectOfPerson(author);
    const done = await stopAsIs(ctx, subject, { channelId: open.channel_id, messageId })
      .catch(() => null);
    if (done) stopped++;
  }
  return stopped;
}

/** Ends a stream as it stands, whatever its age: false when it had stopped already. */
async function stopAsIs(
  ctx: Ctx,
  subject: Subject,
  { channelId, messageId }: { channelId: string; messageId: string },
): Promise<boolean> {
  return await ctx.kv.lock(MESSAGE_LOCKS).run(
    messageId,
    () =>
      retrying("stop a stream left open", async () => {
        const loaded = await loadOwn(ctx, subject, { channelId, messageId }, "message.stream")
          .catch((e) => {
            if (e?.status === 404) throw notFound("Gone.");
            throw e;
          });
        const m = loaded.message;
        if (!m.stream || m.deleted_at) {
          const op = ctx.kv.atomic();
          closeStream(op, m);
          await op.commit();
          return false;
        }
        const content = rendered(m.stream) as { body: string; blocks: Block[] };
        return !!await rewrite(ctx, loaded, content, {
          event: "message.created",
          also: closeStream,
        });
      }),
  );
}

/** How often each process looks for streams left open: they stop within this of their 10 minutes. */
const STALE_LOOK_MS = 5_000;

export const STREAMS_CRON_NAME = "stop streams left open";

/** Stops streams left open, every STALE_LOOK_MS where timers run; `runDue` serves the cron task. */
export class StreamStopper extends Periodic {
  constructor(ctx: Ctx) {
    super(() => stopStaleStreams(ctx), { everyMs: STALE_LOOK_MS, what: "streams left open" });
  }
}
