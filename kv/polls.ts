/** A poll's votes: who chose each option, and each voter's ballot (domain/messages/polls.ts). */
import type { MemberRef } from "../core/types.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store/store.ts";

/** Up to `limit` voters of a poll's option, by user id, after `afterUserId` when given. */
export async function optionVoters(
  kv: Store,
  { messageId, optionId, afterUserId, limit }: {
    messageId: string;
    optionId: string;
    afterUserId: string | null;
    limit: number;
  },
): Promise<MemberRef[]> {
  const prefix = keys.pollVoters(messageId, optionId);
  const selector = afterUserId
    ? { prefix, start: [...prefix, `${afterUserId}\u0000`] }
    : { prefix };
  const out: MemberRef[] = [];
  for await (const e of kv.list<MemberRef>(selector, { limit })) out.push(e.value);
  return out;
}
