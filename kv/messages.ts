import type { Message } from "../core/types.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store/store.ts";
import type { Plan } from "./store/plan.ts";
import { putMessage } from "./message_copies.ts";

export async function getMessage(kv: Store, id: string) {
  return await kv.get<Message>(keys.message(id));
}

/**
 * Rewrites every copy of an existing message in one commit with the rest of `op` (its checks: at
 * least the message's own entry as read). False when one of them no longer holds: read again.
 */
export async function replaceMessage(op: Plan, next: Message): Promise<boolean> {
  putMessage(op, next);
  return (await op.commit()).ok;
}

/** Where a list of messages keeps its copies and its length: a timeline or one thread. */
export interface ListKeys {
  at(pos: number): Deno.KvKey;
  length: Deno.KvKey;
}

export const timelineKeys = (channelId: string): ListKeys => ({
  at: (pos) => keys.timelineAt(channelId, pos),
  length: keys.timelineLen(channelId),
});

export const threadKeys = (rootId: string): ListKeys => ({
  at: (pos) => keys.threadAt(rootId, pos),
  length: keys.threadLen(rootId),
});

/**
 * The messages at positions `lo..hi` (inclusive) in one range read, highest position first when
 * `reverse`. Cost depends on the page size, not on how deep in the list the page is.
 */
export async function readRange(
  kv: Store,
  list: ListKeys,
  { lo, hi, reverse }: { lo: number; hi: number; reverse: boolean },
): Promise<Message[]> {
  if (lo > hi) return [];
  const size = hi - lo + 1;
  const out: Message[] = [];
  const entries = kv.list<Message>(
    { start: list.at(lo), end: list.at(hi + 1) },
    { reverse, limit: size, batchSize: size },
  );
  for await (const e of entries) out.push(e.value);
  return out;
}
