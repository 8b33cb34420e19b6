import type { Message } from "../domain/types.ts";
import { putMessage } from "./appender.ts";
import { keys } from "./keys.ts";

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
