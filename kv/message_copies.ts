import type { Message } from "../core/types.ts";
import { keys } from "./keys.ts";
import type { Plan } from "./store/plan.ts";

/** A message belongs in the channel timeline unless it is a thread reply kept in its thread. */
export const inTimeline = (m: Pick<Message, "thread_root_id" | "sent_to_channel">) =>
  m.thread_root_id === null || m.sent_to_channel;

/** The keys a message is stored under: its primary record and each copy in a list. */
export function messageKeys(m: Message): Deno.KvKey[] {
  const out: Deno.KvKey[] = [keys.message(m.id)];
  if (m.timeline_pos !== null) out.push(keys.timelineAt(m.channel_id, m.timeline_pos));
  if (m.thread_root_id && m.thread_pos !== null) {
    out.push(keys.threadAt(m.thread_root_id, m.thread_pos));
  }
  return out;
}

/** Adds the write of every copy of `m` to a commit, so all views of it change together. */
export function putMessage(op: Plan, m: Message): void {
  for (const key of messageKeys(m)) op.set(key, m);
}
