import { keys } from "./keys.ts";
import type { Store } from "./store.ts";

/**
 * Deletes every reaction record of a message that became a tombstone (its summary is already
 * empty, and a tombstone takes no reactions, so nothing writes them again).
 */
export async function clearReactions(kv: Store, messageId: string): Promise<void> {
  let op = kv.atomic();
  let pending = 0;
  for await (const e of kv.list({ prefix: keys.reactions(messageId) })) {
    op.delete(e.key);
    if (++pending === 500) {
      await op.commit();
      [op, pending] = [kv.atomic(), 0];
    }
  }
  if (pending) await op.commit();
}
