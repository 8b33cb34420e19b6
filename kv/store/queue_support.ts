/**
 * Whether a store delivers KV queue messages. A local SQLite store does, and so did Deno Deploy
 * Classic; KV Connect (self-hosted denokv) and the new Deno Deploy don't. Without them nothing is
 * enqueued (an enqueue would fail the whole commit it rides in) and the delivery engine's pulls
 * find due jobs themselves. A service without timers (DELIVERY_TIMERS=false) uses none either:
 * its retries are the every-minute cron task's to send.
 */
const PROBE_TIMEOUT_MS = 2_000;

/** Finds out by enqueueing a no-op message (the engine's listener drops it). */
export async function probeQueues(kv: Deno.Kv, kvPath: string | undefined): Promise<boolean> {
  if (kvPath && /^https?:\/\//.test(kvPath)) return false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      kv.enqueue({ kind: "probe" }),
      new Promise((_, reject) => {
        timer = setTimeout(reject, PROBE_TIMEOUT_MS, new Error("no answer"));
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
