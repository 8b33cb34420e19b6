/**
 * An agent's conversations with a person (decisions.md, "Slack's agents"): per direct channel and
 * thread (`""` for the conversation itself, under `agent_view`), what the person looks at beside
 * it, and what the agent shows: its status while it works and the prompts it suggests. None of it
 * is a message; each change is one write, the person told on their live stream.
 */
import type { SuggestedPrompt } from "../../core/app_records.ts";
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";

export interface AgentThread {
  app_id: string;
  team_id: string;
  /** The person the agent talks with. */
  user_id: string;
  /** Their direct channel with the app's bot. */
  channel_id: string;
  /** The thread's root `ts`; null for the conversation itself. */
  thread_ts: string | null;
  /** The channel the person looks at beside the agent, if one. */
  context_channel_id: string | null;
  /** What the agent is doing, `""` when nothing; `loading_messages` are shown in turn. */
  status: string;
  loading_messages: string[];
  suggested_prompts: { title: string | null; prompts: SuggestedPrompt[] };
  updated_at: string;
}

const keyOf = (channelId: string, threadTs: string | null) =>
  keys.agentThread(channelId, threadTs ?? "");

/** The conversation's or thread's record, as read. */
export const getAgentThread = (kv: Store, channelId: string, threadTs: string | null) =>
  kv.get<AgentThread>(keyOf(channelId, threadTs));

/** Writes the record unless it changed since `entry`: false when it did. */
export async function putAgentThread(
  kv: Store,
  entry: Deno.KvEntryMaybe<AgentThread>,
  next: AgentThread,
): Promise<boolean> {
  const key = keyOf(next.channel_id, next.thread_ts);
  return (await kv.atomic().check(entry).set(key, next).commit()).ok;
}
