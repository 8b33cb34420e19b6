/**
 * Replies agents are streaming (decisions.md, "Slack's agents"), by when each started: a stream
 * never stopped is stopped by the service after ten minutes, and this index is how it is found.
 */
import type { Message } from "../../core/types.ts";
import { keys } from "../keys.ts";
import type { Plan } from "../store/plan.ts";
import type { Store } from "../store/store.ts";

/** Kept a day at most: a process that stops streams finds each long before. */
export const OPEN_STREAM_KEPT_MS = 24 * 3_600_000;

export interface OpenStream {
  channel_id: string;
  author_id: string;
}

const startedMs = (m: Pick<Message, "stream" | "created_at">) =>
  Date.parse(m.stream?.started_at ?? m.created_at);

/** Adds the streaming message `m` to the index, in the commit that posts it. */
export function openStream(op: Plan, m: Message): void {
  const value: OpenStream = { channel_id: m.channel_id, author_id: m.author.id };
  op.set(keys.openStream(startedMs(m), m.id), value, { expireIn: OPEN_STREAM_KEPT_MS });
}

/** Takes the message out of the index, in the commit that stops its stream. */
export function closeStream(op: Plan, m: Message): void {
  op.delete(keys.openStream(startedMs(m), m.id));
}

/** The streams started before `beforeMs`, oldest first: `[messageId, stream]`. */
export async function streamsStartedBefore(
  kv: Store,
  beforeMs: number,
): Promise<[string, OpenStream][]> {
  const out: [string, OpenStream][] = [];
  const list = kv.list<OpenStream>({
    start: keys.openStreams(),
    end: [...keys.openStreams(), beforeMs],
  });
  for await (const e of list) out.push([e.key[2] as string, e.value]);
  return out;
}
