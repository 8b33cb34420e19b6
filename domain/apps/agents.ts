/**
 * A person and an agent (decisions.md, "Slack's agents: assistant threads and streamed replies"):
 * in their direct channel with the app's bot, the person opens the agent's Messages tab
 * (`agent_view`: `app_home_opened` with `tab: "messages"`), starts a thread (`assistant_view`: a
 * root message and `assistant_thread_started`), and tells the agent what they look at beside it
 * (`assistant_thread_context_changed`, `app_context_changed`). What the agent shows back (its
 * status, suggested prompts and title) is domain/apps/agent_display.ts's.
 */
import type { Ctx } from "../context.ts";
import type { Subject, User } from "../../core/types.ts";
import type { App } from "../../core/app_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { messageTs, storedId } from "../../core/ids.ts";
import { retrying } from "../../core/retry.ts";
import { type AgentThread, getAgentThread, putAgentThread } from "../../kv/apps/agent_threads.ts";
import { getUser } from "../../kv/workspace.ts";
import { authorize } from "../policy.ts";
import { directChannelOf } from "../channels/direct.ts";
import { loadChannel } from "../channels/access.ts";
import { postMessageWith } from "../messages/messages.ts";
import { tellApp } from "./app_events.ts";
import { type LiveInstall, liveInstall } from "./live_install.ts";

const noAgent = () => notFound("No such agent in this team.");

/** Whether an app is an agent a person talks with: Slack's assistant or agent view. */
export const isAgent = (app: App) => !!(app.assistant_view || app.agent_view);

/** The agent live in the subject's team, the person, and their direct channel with its bot. */
async function meetAgent(ctx: Ctx, subject: Subject, appId: string) {
  authorize(subject, "app.home_open", { team_id: subject.team_id });
  const id = storedId(appId);
  const live = id ? await liveInstall(ctx, { teamId: subject.team_id, appId: id }) : null;
  if (!live || !isAgent(live.app)) throw noAgent();
  const person = await getUser(ctx.kv, subject.user_id);
  if (!person) throw noAgent();
  const dm = await directChannelOf(ctx, [live.bot as User, person]);
  return { live, person, channelId: dm.id };
}

/** A conversation's or thread's record as it stands, or as it starts: the app's first prompts. */
function stateOf(
  live: LiveInstall,
  entry: Deno.KvEntryMaybe<AgentThread>,
  { userId, channelId, threadTs }: { userId: string; channelId: string; threadTs: string | null },
): AgentThread {
  const view = live.app.assistant_view ?? live.app.agent_view;
  return entry.value ?? {
    app_id: live.app.id,
    team_id: live.install.team_id,
    user_id: userId,
    channel_id: channelId,
    thread_ts: threadTs,
    context_channel_id: null,
    status: "",
    loading_messages: [],
    suggested_prompts: { title: null, prompts: view?.suggested_prompts ?? [] },
    updated_at: new Date().toISOString(),
  };
}

/** The channel the person says they look at: one they can read; 422 on `field` otherwise. */
async function contextOf(ctx: Ctx, subject: Subject, channelId: string | null, field: string) {
  if (channelId === null) return null;
  const id = storedId(channelId);
  const access = id ? await loadChannel(ctx, subject, id).catch(() => null) : null;
  if (!access) throw invalid(field, "No such channel you can see.");
  return access.channel.id;
}

/**
 * GET /apps/{app}/home?tab=messages: the person opens the agent's Messages tab. The app hears
 * `app_home_opened` with `tab: "messages"`; the answer is the conversation as it stands.
 */
export async function openMessages(ctx: Ctx, subject: Subject, appId: string) {
  const { live, person, channelId } = await meetAgent(ctx, subject, appId);
  await tellApp(ctx, {
    live,
    botEvent: "app_home_opened",
    type: "app.home_opened",
    channelId,
    data: { user_id: person.id, tab: "messages", view: null },
  });
  const entry = await getAgentThread(ctx.kv, channelId, null);
  return stateOf(live, entry, { userId: person.id, channelId, threadTs: null });
}

/**
 * POST /apps/{app}/threads: the person starts a thread with the agent, in their direct channel,
 * looking at `contextChannelId` (one they can see) or at nothing. Its root is theirs, as Slack's
 * client makes it; the app hears `assistant_thread_started`.
 */
export async function startThread(
  ctx: Ctx,
  subject: Subject,
  { appId, contextChannelId }: { appId: string; contextChannelId: string | null },
) {
  const { live, person, channelId } = await meetAgent(ctx, subject, appId);
  const context = await contextOf(ctx, subject, contextChannelId, "context.channel_id");
  const { message: root } = await postMessageWith(ctx, subject, {
    channelId,
    input: { ok: true, value: { body: "New chat", agent_thread: true } },
    bodyField: "body",
  });
  const threadTs = messageTs(root);
  const entry = await getAgentThread(ctx.kv, channelId, threadTs);
  const state = {
    ...stateOf(live, entry, { userId: person.id, channelId, threadTs }),
    context_channel_id: context,
  };
  await putAgentThread(ctx.kv, entry, state);
  await tellApp(ctx, {
    live,
    botEvent: "assistant_thread_started",
    type: "assistant.thread_started",
    channelId,
    data: { user_id: person.id, thread_ts: threadTs, context_channel_id: context },
  });
  return { ...state, root_id: root.id };
}

/** GET /apps/{app}/threads/{thread_ts}: the thread as its person sees it. */
export async function showThread(
  ctx: Ctx,
  subject: Subject,
  { appId, threadTs }: { appId: string; threadTs: string },
) {
  const { channelId } = await meetAgent(ctx, subject, appId);
  const entry = await getAgentThread(ctx.kv, channelId, threadTs);
  if (!entry.value) throw notFound("No such thread.");
  return entry.value;
}

/**
 * PUT /apps/{app}/threads/{thread_ts}/context, or without a thread PUT /apps/{app}/context: the
 * person now looks at `contextChannelId` (or at nothing). The app hears
 * `assistant_thread_context_changed`, or for the conversation itself `app_context_changed`.
 */
export async function changeContext(
  ctx: Ctx,
  subject: Subject,
  { appId, threadTs, contextChannelId }: {
    appId: string;
    threadTs: string | null;
    contextChannelId: string | null;
  },
) {
  const { live, person, channelId } = await meetAgent(ctx, subject, appId);
  const context = await contextOf(ctx, subject, contextChannelId, "channel_id");
  const state = await retrying("change an agent's context", async () => {
    const entry = await getAgentThread(ctx.kv, channelId, threadTs);
    if (threadTs !== null && !entry.value) throw notFound("No such thread.");
    const next = {
      ...stateOf(live, entry, { userId: person.id, channelId, threadTs }),
      context_channel_id: context,
      updated_at: new Date().toISOString(),
    };
    return await putAgentThread(ctx.kv, entry, next) ? next : null;
  });
  await tellApp(ctx, {
    live,
    botEvent: threadTs === null ? "app_context_changed" : "assistant_thread_context_changed",
    type: threadTs === null ? "app.context_changed" : "assistant.thread_context_changed",
    channelId,
    data: { user_id: person.id, thread_ts: threadTs, context_channel_id: context },
  });
  return state;
}
