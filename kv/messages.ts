import type { Message } from "../domain/types.ts";
import { keys } from "./keys.ts";
import { PositionAllocator } from "./positions.ts";

const positions = new PositionAllocator();

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

/** A message belongs in the channel timeline unless it is a thread reply kept in its thread. */
export const inTimeline = (m: Pick<Message, "thread_root_id" | "sent_to_channel">) =>
  m.thread_root_id === null || m.sent_to_channel;

export interface AppendOptions {
  /** The caller's preconditions (channel unchanged, still a member, ...), re-checked at commit. */
  checks: Deno.AtomicCheck[];
  /** The change's other writes (membership, events), in the same commit as the message. */
  extend?: (op: Deno.AtomicOperation, stored: Message) => void;
  /**
   * Index the draft's client_uuid, so that a resend finds this message. Only for a key the client
   * chose: one the service generated can never come back, and the index costs every post.
   */
  indexClientUuid?: boolean;
}

/**
 * Appends a new message to its timeline and/or thread in one commit with `opts.extend`'s writes.
 * Returns the stored message, or null when one of the caller's checks failed (it should read
 * again and decide). A slot taken by another writer is retried here with a fresh position.
 */
export async function appendMessage(
  kv: Deno.Kv,
  draft: Message,
  opts: AppendOptions,
): Promise<Message | null> {
  const timelineLen = keys.timelineLen(draft.channel_id);
  const threadLen = draft.thread_root_id ? keys.threadLen(draft.thread_root_id) : null;
  for (let attempt = 0; attempt < 8; attempt++) {
    const message: Message = {
      ...draft,
      timeline_pos: inTimeline(draft) ? await positions.take(kv, timelineLen) : null,
      thread_pos: threadLen ? await positions.take(kv, threadLen) : null,
    };
    // The primary key needs no check: a fresh UUIDv7 is unique. The list slots do, as another
    // process may have taken the position.
    const slots = messageKeys(message).slice(1);
    const op = kv.atomic().check(...opts.checks);
    for (const key of slots) op.check({ key, versionstamp: null });
    if (opts.indexClientUuid && message.client_uuid) {
      op.check({ key: keys.clientUuid(message.author.id, message.client_uuid), versionstamp: null })
        .set(keys.clientUuid(message.author.id, message.client_uuid), message.id);
    }
    putMessage(op, message);
    if (message.timeline_pos !== null) {
      op.max(timelineLen, BigInt(message.timeline_pos));
    }
    if (threadLen && message.thread_pos !== null) {
      op.max(threadLen, BigInt(message.thread_pos));
    }
    opts.extend?.(op, message);
    if ((await op.commit()).ok) return message;

    const taken = (await kv.getMany(slots)).some((e) => e.versionstamp !== null);
    if (message.timeline_pos !== null) {
      if (taken) positions.reset(timelineLen);
      else await positions.release(timelineLen, message.timeline_pos);
    }
    if (threadLen && message.thread_pos !== null) {
      if (taken) positions.reset(threadLen);
      else await positions.release(threadLen, message.thread_pos);
    }
    if (!taken) return null;
  }
  throw new Error("append message: could not find a free position");
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
