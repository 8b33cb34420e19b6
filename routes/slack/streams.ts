/**
 * `chat.startStream`, `chat.appendStream` and `chat.stopStream`: a reply an agent writes as it
 * thinks (domain/messages/streams.ts), as Bolt's `sayStream` and web-api's `chatStream` call them.
 */
import { z } from "zod";
import { appendStream, startStream, stopStream } from "../../domain/messages/streams.ts";
import { answered } from "../../domain/apps/agent_display.ts";
import { slackMessage } from "../../domain/slack/shapes.ts";
import type { Method, MethodCall } from "./method.ts";
import { args, blocksArg, markdownArg } from "./args.ts";
import { SlackError } from "./errors.ts";

const content = {
  channel: z.string(),
  markdown_text: markdownArg,
  // A form sends them as JSON text, as it sends blocks.
  chunks: blocksArg,
};
const start = z.object({
  ...content,
  thread_ts: z.string().min(1),
  recipient_user_id: z.string().optional(),
  recipient_team_id: z.string().optional(),
  task_display_mode: z.enum(["timeline", "plan"]).optional(),
});
const append = z.object({ ...content, ts: z.string().min(1) });
const stop = z.object({ ...append.shape, blocks: blocksArg, metadata: z.unknown().optional() });

/** What a call adds: `markdown_text` and `chunks` as the domain takes them. */
const added = (p: { markdown_text?: string; chunks?: unknown }) => ({
  markdownText: p.markdown_text,
  chunks: p.chunks,
});

async function startCall({ ctx, subject, params }: MethodCall) {
  const p = args(start, params);
  const message = await startStream(ctx, subject, {
    channelId: p.channel,
    threadTs: p.thread_ts,
    recipientUserId: p.recipient_user_id?.toLowerCase(),
    recipientTeamId: p.recipient_team_id?.toLowerCase(),
    mode: p.task_display_mode,
    content: added(p),
  });
  // Its answer begins: the status the agent showed in the thread ends, as a reply ends it.
  await answered(ctx, message);
  return { channel: message.channel_id, ts: message.ts };
}

async function appendCall({ ctx, subject, params }: MethodCall) {
  const p = args(append, params);
  if (p.markdown_text === undefined && p.chunks === undefined) {
    throw new SlackError("invalid_arguments");
  }
  const message = await appendStream(ctx, subject, { channelId: p.channel, ts: p.ts }, added(p));
  return { channel: message.channel_id, ts: message.ts };
}

async function stopCall({ ctx, subject, params }: MethodCall) {
  const p = args(stop, params);
  const message = await stopStream(ctx, subject, { channelId: p.channel, ts: p.ts }, {
    ...added(p),
    blocks: p.blocks,
    metadata: p.metadata,
  });
  return {
    channel: message.channel_id,
    ts: message.ts,
    message: slackMessage(message, { metadata: true }),
  };
}

export const streamMethods: Record<string, Method> = {
  "chat.startStream": { scope: "messages:write", run: startCall },
  "chat.appendStream": { scope: "messages:write", run: appendCall },
  "chat.stopStream": { scope: "messages:write", run: stopCall },
};
