import type { Message } from "../core/types.ts";
import { keys } from "./keys.ts";

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
export function putMessage(op: Deno.AtomicOperation, m: Message): void {
  for (const key of messageKeys(m)) op.set(key, m);
}

export async function getMessage(kv: Deno.Kv, id: string) {
  return await kv.get<Message>(keys.message(id));
}

/**
 * Rewrites every copy of an existing message, with `extend`'s writes, in one commit. False when
 * one of `checks` (at least the message's own entry as read) no longer holds: read again.
 */
export async function replaceMessage(
  kv: Deno.Kv,
  checks: Deno.AtomicCheck[],
  next: Message,
  extend?: (op: Deno.AtomicOperation) => void,
): Promise<boolean> {
  const op = kv.atomic().check(...checks);
  putMessage(op, next);
  extend?.(op);
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
  kv: Deno.Kv,
  list: ListKeys,
  lo: number,
  hi: number,
  reverse: boolean,
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
