import type { DeliveryJob } from "../../core/webhook_records.ts";
import { chunks } from "../../core/chunks.ts";
import * as moves from "./job_moves.ts";
import type { Leasable } from "./job_moves.ts";
import { commitInBatches } from "../store/commit.ts";
import type { Store } from "../store/store.ts";
import type { Work } from "./handed_share.ts";

/** KV allows 10 checks per commit: one per entry leased. */
const LEASE_BATCH = 10;

/**
 * Leases entries as read, until `until`: each is taken only if unchanged since it was read, so
 * of two processes that found the same job, one gets it. Returns the leased entries as they now
 * stand, in order; an entry someone else changed meanwhile is left out. The batches commit at
 * once, not one after another: on a remote store each is a round trip.
 */
export async function lease(
  kv: Store,
  entries: Deno.KvEntry<Leasable>[],
  until: number,
): Promise<Deno.KvEntry<Leasable>[]> {
  const won = await Promise.all(
    chunks(entries, LEASE_BATCH).map(async (batch) => {
      const together = await leaseTogether(kv, batch, until);
      if (together || batch.length === 1) return together ?? [];
      // One of them changed: each goes alone, so the others are still taken.
      const alone = await Promise.all(batch.map((e) => leaseTogether(kv, [e], until)));
      return alone.flatMap((w) => w ?? []);
    }),
  );
  return won.flat();
}

async function leaseTogether(kv: Store, batch: Deno.KvEntry<Leasable>[], until: number) {
  const op = kv.atomic();
  const next = batch.map((e) => moves.lease(op, e, until));
  const res = await op.commit();
  if (!res.ok) return null;
  return batch.map((e, i) => ({ key: e.key, value: next[i], versionstamp: res.versionstamp }));
}

/**
 * Frees leased entries this process will not attempt after all (it is stopping): job move "lapse",
 * core/job_states.ts, at once rather than when the lease runs out. First attempts still in a
 * handed-jobs record become free jobs, so other engines take them now rather than once the
 * record's lease ran out.
 */
export async function unlease(kv: Store, entries: Work<Leasable>[]): Promise<void> {
  const handed = Map.groupBy(entries.filter((e) => e.handed), (e) => e.handed!);
  for (const [share, held] of handed) {
    await share.toJobs(kv, held.map((e) => e.value as DeliveryJob), null);
  }
  await commitInBatches(
    kv,
    entries.filter((e) => !e.handed),
    LEASE_BATCH,
    (op, e) => moves.unlease(op, e),
  );
}
