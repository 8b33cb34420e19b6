import type { DeliveryJob } from "../../core/webhook_records.ts";
import { keys } from "../keys.ts";
import { recount } from "./job_moves.ts";
import type { Store } from "../store/store.ts";

/** Where a scan of a subscription's jobs starts (just after `after`) or ends (at `through`). */
export type JobRange = { after: Deno.KvKey } | { through: Deno.KvKey } | Record<never, never>;

/**
 * A subscription's pending jobs in event order, within `range`, `limit` at most, read (and
 * decoded) `batchSize` at a time.
 */
export function listJobs(
  kv: Store,
  subscriptionId: string,
  range: JobRange,
  { limit, batchSize }: { limit: number; batchSize: number },
): Deno.KvListIterator<DeliveryJob> {
  const prefix = keys.jobs(subscriptionId);
  // A key with one more part sorts right after it: the start excludes `after`, the end keeps
  // `through`.
  const selector = "after" in range
    ? { prefix, start: [...range.after, ""] }
    : "through" in range
    ? { prefix, end: [...range.through, ""] }
    : { prefix };
  return kv.list<DeliveryJob>(selector, { limit, batchSize: Math.min(limit, batchSize, 500) });
}

/** How much delivery work waits in KV: the pending jobs, and when the oldest was made. */
export interface Backlog {
  pending: number;
  oldestCreatedAt: string | null;
}

const countOf = (e: Deno.KvEntryMaybe<Deno.KvU64>) => e.value?.value ?? 0n;

/** A subscription's jobs not yet settled: first tries and retries still to come. */
export async function pendingJobs(kv: Store, subscriptionId: string): Promise<number> {
  const [created, settled] = await kv.getMany<[Deno.KvU64, Deno.KvU64]>([
    keys.jobsCreated(subscriptionId),
    keys.jobsSettled(subscriptionId),
  ]);
  const open = countOf(created) - countOf(settled);
  return open > 0n ? Number(open) : 0;
}

/**
 * The backlog without a scan: per subscription, the jobs made minus those settled (both summed
 * in the commits that make and settle them), and its first job, the oldest (ids sort by time).
 * A few reads per subscription, whatever the backlog.
 */
export async function measureBacklog(kv: Store): Promise<Backlog> {
  let pending = 0n;
  let oldest: string | null = null;
  for (const id of await listSubscriptionIds(kv)) {
    const [created, settled] = await kv.getMany<[Deno.KvU64, Deno.KvU64]>([
      keys.jobsCreated(id),
      keys.jobsSettled(id),
    ]);
    const open = countOf(created) - countOf(settled);
    if (open > 0n) pending += open;
    for await (const e of kv.list<DeliveryJob>({ prefix: keys.jobs(id) }, { limit: 1 })) {
      if (oldest === null || e.value.created_at < oldest) oldest = e.value.created_at;
    }
  }
  return { pending: Number(pending), oldestCreatedAt: oldest };
}

/** The delivery signal's entry: its versionstamp moves whenever work is left for any engine. */
export const readSignal = (kv: Store) => kv.get(keys.deliverySignal());

/** Forgets queue messages the queue gave up on: the sweeper finds their jobs by itself. */
export async function clearUndelivered(kv: Store): Promise<void> {
  const op = kv.atomic();
  let n = 0;
  for await (const e of kv.list({ prefix: keys.undeliveredAll() }, { limit: 500 })) {
    op.delete(e.key);
    n++;
  }
  if (n) await op.commit();
}

/** Every subscription id, for pruning at start. */
export async function listSubscriptionIds(kv: Store): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of kv.list({ prefix: keys.webhooks() })) ids.push(e.key[1] as string);
  return ids;
}

/**
 * Sets each subscription's job counts to what its jobs are: stores of releases before the
 * counts (or whose counts drifted) read fewer pending than wait. A job made or settled
 * meanwhile moves a count this checks, and the subscription is counted again.
 */
export async function recountPendingJobs(kv: Store): Promise<void> {
  for (const id of await listSubscriptionIds(kv)) {
    for (let done = false; !done;) {
      const [created, settled] = await kv.getMany<[Deno.KvU64, Deno.KvU64]>([
        keys.jobsCreated(id),
        keys.jobsSettled(id),
      ]);
      let waiting = 0n;
      for await (const _ of kv.list({ prefix: keys.jobs(id) }, { batchSize: 500 })) waiting++;
      const op = kv.atomic();
      recount(op, { created, settled, waiting });
      done = (await op.commit()).ok;
    }
  }
}
