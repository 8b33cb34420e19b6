import { errorFields, log } from "../core/log.ts";
import type { Store } from "../kv/store/store.ts";
import { own } from "../core/tables.ts";

/** A queue message handler. Handlers must be idempotent: the queue delivers at least once. */
// deno-lint-ignore no-explicit-any
export type QueueHandler = (message: any) => Promise<void> | void;

/**
 * The process's one `kv.listenQueue` (Deno KV allows a single listener per process). Each
 * message names its `kind`; a handler that throws is logged, not rethrown, so a bad message
 * is not redelivered forever and the listener keeps running.
 */
export function listenQueue(kv: Store, handlers: Record<string, QueueHandler>): Promise<void> {
  return kv.listenQueue(async (message: unknown) => {
    const kind = (message as { kind?: unknown } | null)?.kind;
    const handler = typeof kind === "string" ? own(handlers, kind) : undefined;
    if (!handler) {
      log.warn("queue: a message of unknown kind was dropped", { kind: String(kind) });
      return;
    }
    try {
      await handler(message);
    } catch (e) {
      log.error("queue: a handler failed", { kind, ...errorFields(e) });
    }
  });
}
