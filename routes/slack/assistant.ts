/**
 * `assistant.threads.*`: what an agent shows the person it talks with (domain/apps/agent_display.ts):
 * its status, suggested prompts and a thread's title, in its bot's direct channel with them.
 */
import { z } from "zod";
import { setStatus, setSuggestedPrompts, setTitle } from "../../domain/apps/agent_display.ts";
import { storedId } from "../../core/ids.ts";
import type { Method, MethodCall } from "./method.ts";
import { args, blocksArg } from "./args.ts";
import { SlackError } from "./errors.ts";

const place = {
  channel_id: z.string(),
  thread_ts: z.string().optional(),
};
const statusArgs = z.object({
  ...place,
  status: z.string().max(1_000),
  // A form sends a list as JSON text, as it sends blocks.
  loading_messages: blocksArg.pipe(z.array(z.string().max(1_000)).optional()),
});
const promptsArgs = z.object({
  ...place,
  title: z.string().max(200).optional(),
  prompts: blocksArg.pipe(
    z.array(z.object({ title: z.string().min(1).max(200), message: z.string().min(1).max(4_000) })),
  ),
});
const titleArgs = z.object({ ...place, thread_ts: z.string(), title: z.string().max(1_000) });

/** The place an agent's method names: its channel as stored, and its thread if one. */
function placeOf(p: { channel_id: string; thread_ts?: string }) {
  const channelId = storedId(p.channel_id);
  if (!channelId) throw new SlackError("channel_not_found");
  return { channelId, threadTs: p.thread_ts || null };
}

const status = async ({ ctx, subject, params }: MethodCall) => {
  const p = args(statusArgs, params);
  await setStatus(ctx, subject, {
    place: placeOf(p),
    status: p.status,
    loadingMessages: p.loading_messages ?? [],
  });
  return {};
};

const prompts = async ({ ctx, subject, params }: MethodCall) => {
  const p = args(promptsArgs, params);
  await setSuggestedPrompts(ctx, subject, {
    place: placeOf(p),
    prompts: p.prompts,
    title: p.title ?? null,
  });
  return {};
};

const title = async ({ ctx, subject, params }: MethodCall) => {
  const p = args(titleArgs, params);
  const { channelId } = placeOf(p);
  await setTitle(ctx, subject, { place: { channelId, threadTs: p.thread_ts }, title: p.title });
  return {};
};

/** An agent's bot calls them with `assistant:write` (our `messages:write`). */
export const assistantMethods: Record<string, Method> = {
  "assistant.threads.setStatus": {
    scope: "messages:write",
    slackScope: "assistant:write",
    run: status,
  },
  "assistant.threads.setSuggestedPrompts": {
    scope: "messages:write",
    slackScope: "assistant:write",
    run: prompts,
  },
  "assistant.threads.setTitle": {
    scope: "messages:write",
    slackScope: "assistant:write",
    run: title,
  },
};
