/**
 * What an agent shows its person (decisions.md, "Slack's agents"): `assistant.threads.setStatus`
 * (what it is doing, cleared by `""` or by its reply), `setSuggestedPrompts` and `setTitle`. None
 * is a message and none reaches subscriptions: status and prompts are kept with the conversation
 * or thread (kv/apps/agent_threads.ts) and told to the person's live stream; the title is the thread
 * root's text, which the person wrote as `New chat`, changed as an edit is.
 */
import type { Ctx } from "../context.ts";
import type { Channel, Message, Subject } from "../../core/types.ts";
import type { SuggestedPrompt } from "../../core/app_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { retrying } from "../../core/retry.ts";
import { type AgentThread, getAgentThread, putAgentThread } from "../../kv/apps/agent_threads.ts";
import { listMembers } from "../../kv/channels.ts";
import { relayNotice } from "../../kv/ephemeral.ts";
import { keys } from "../../kv/keys.ts";
import { loadChannelWith } from "../channels/access.ts";
import { retitle } from "../messages/changes.ts";
import { installOfBot } from "./bot_install.ts";

/** At most this many loading messages, as Slack takes them. */
export const MAX_LOADING_MESSAGES = 10;
/** At most this many suggested prompts. */
export const MAX_PROMPTS = 4;

/** Where an agent shows something: its bot's direct channel with a person, a thread in it or not. */
interface Place {
  channelId: string;
  threadTs: string | null;
}

/**
 * The conversation or thread the calling bot's app shows something in: the bot's direct channel
 * with a person (404 for any other channel), and a thread of it (404 for a `ts` that is none).
 */
async function placeOf(ctx: Ctx, subject: Subject, { channelId, threadTs }: Place) {
  const install = await installOfBot(ctx, { teamId: subject.team_id, botId: subject.user_id });
  if (!install) throw invalid("channel_id", "Only an app's bot shows an agent's status.");
  const read = await loadChannelWith<{ rootId: string }>(ctx, subject, channelId, {
    extra: { rootId: threadTs ? keys.messageTs(channelId, threadTs) : null },
  });
  if (!read.channel.is_direct) throw notFound("No such direct channel of the app's bot.");
  const root = read.extra.rootId.value
    ? (await ctx.kv.get<Message>(keys.message(read.extra.rootId.value))).value
    : null;
  if (threadTs && (!root || root.thread_root_id || root.deleted_at)) {
    throw notFound("No such thread.");
  }
  return { appId: install.app_id, channel: read.channel, root };
}

/** The person of a bot's direct channel: the member who is not the bot. */
async function personOf(ctx: Ctx, channel: Channel, botId: string): Promise<string> {
  const members = await listMembers(ctx.kv, channel.id);
  const person = members.find((m) => m.id !== botId);
  if (!person) throw notFound("No such direct channel of the app's bot.");
  return person.id;
}

/** Changes the conversation's or thread's record by `change`, and tells its person. */
async function show(
  ctx: Ctx,
  subject: Subject,
  { place, change, notice }: {
    place: Place;
    change: (state: AgentThread) => AgentThread;
    notice: { type: string; data: (state: AgentThread) => unknown };
  },
): Promise<void> {
  const { appId, channel } = await placeOf(ctx, subject, place);
  const userId = await personOf(ctx, channel, subject.user_id);
  const state = await retrying("show an agent's state", async () => {
    const entry = await getAgentThread(ctx.kv, channel.id, place.threadTs);
    const now = entry.value ?? {
      app_id: appId,
      team_id: subject.team_id,
      user_id: userId,
      channel_id: channel.id,
      thread_ts: place.threadTs,
      context_channel_id: null,
      status: "",
      loading_messages: [],
      suggested_prompts: { title: null, prompts: [] },
      updated_at: "",
    };
    const next = { ...change(now), updated_at: new Date().toISOString() };
    return await putAgentThread(ctx.kv, entry, next) ? next : null;
  });
  await relayNotice(ctx, subject.team_id, {
    user_id: userId,
    channel_id: channel.id,
    type: notice.type,
    data: notice.data(state),
  });
}

/** assistant.threads.setStatus: `""` clears it. */
export function setStatus(
  ctx: Ctx,
  subject: Subject,
  { place, status, loadingMessages }: {
    place: Place;
    status: string;
    loadingMessages: string[];
  },
) {
  if (loadingMessages.length > MAX_LOADING_MESSAGES) {
    throw invalid("loading_messages", `At most ${MAX_LOADING_MESSAGES} loading messages.`);
  }
  return show(ctx, subject, {
    place,
    change: (s) => ({ ...s, status, loading_messages: status ? loadingMessages : [] }),
    notice: { type: "assistant.status", data: statusOf },
  });
}

/** assistant.threads.setSuggestedPrompts: 1 to 4 prompts, and a title above them. */
export function setSuggestedPrompts(
  ctx: Ctx,
  subject: Subject,
  { place, prompts, title }: { place: Place; prompts: SuggestedPrompt[]; title: string | null },
) {
  if (prompts.length === 0 || prompts.length > MAX_PROMPTS) {
    throw invalid("prompts", `Between 1 and ${MAX_PROMPTS} prompts.`);
  }
  return show(ctx, subject, {
    place,
    change: (s) => ({ ...s, suggested_prompts: { title, prompts } }),
    notice: {
      type: "assistant.suggested_prompts",
      data: (s) => ({ channel_id: s.channel_id, thread_ts: s.thread_ts, ...s.suggested_prompts }),
    },
  });
}

const statusOf = (s: AgentThread) => ({
  channel_id: s.channel_id,
  thread_ts: s.thread_ts,
  status: s.status,
  loading_messages: s.loading_messages,
});

/** assistant.threads.setTitle: the thread's root says it, changed as an edit is. */
export async function setTitle(
  ctx: Ctx,
  subject: Subject,
  { place, title }: { place: Place & { threadTs: string }; title: string },
) {
  const { root, channel } = await placeOf(ctx, subject, place);
  if (root!.type !== "assistant_thread") {
    throw invalid("thread_ts", "Only a thread started with the agent has a title.");
  }
  await retitle(
    ctx,
    subject,
    { channelId: channel.id, messageId: root!.id },
    title.trim() || "New chat",
  );
}

/**
 * An app's bot answered in a thread of its direct channel: the status it showed there, if any,
 * goes (as Slack clears it when the app replies).
 */
export async function answered(ctx: Ctx, reply: Message): Promise<void> {
  if (reply.author.type !== "bot" || !reply.thread_root_id || !reply.thread_ts) return;
  const entry = await getAgentThread(ctx.kv, reply.channel_id, reply.thread_ts);
  if (!entry.value?.status) return;
  const next = { ...entry.value, status: "", loading_messages: [], updated_at: reply.created_at };
  if (!await putAgentThread(ctx.kv, entry, next)) return;
  await relayNotice(ctx, entry.value.team_id, {
    user_id: entry.value.user_id,
    channel_id: reply.channel_id,
    type: "assistant.status",
    data: statusOf(next),
  });
}
