import type { HandedJobs, Subscription } from "../../core/webhook_records.ts";
import { getAll } from "../store/commit.ts";
import { keys } from "../keys.ts";
import { expand, firstJob } from "./job_moves.ts";
import type { Store } from "../store/store.ts";

/** Records turned into jobs per pass at most; a pass that took this many goes on at once. */
const PASS_LIMIT = 100;

/** What a pass over the handed jobs did, and when the next of them runs out. */
export interface Expansion {
  /** Jobs made from records whose lease ran out. */
  made: number;
  /** When the earliest lease still running runs out (ms), or null when none runs. */
  nextAt: number | null;
}

/**
 * Turns the first attempts of every event whose process let its lease run out with some still
 * pending (it stopped, or fell far behind) into ordinary free jobs, one commit per event, under a
 * check of the record: of two engines that found it, one makes the jobs. The record is keyed by
 * when its lease runs out, so only those that ran out are read. No job is made for a subscription
 * deleted since: nothing would ever attempt or clear it. The 0.31.0 writer keeps each record to
 * what one commit may turn into jobs (two mutations a subscription).
 */
export async function expandHanded(kv: Store, now = Date.now()): Promise<Expansion> {
  // Side by side: on a remote store each read is a round trip.
  const [made, nextAt] = await Promise.all([expandRanOut(kv, now), nextRunningOut(kv, now)]);
  return { made, nextAt };
}

/** The records whose lease ran out by `now` turned into jobs; how many jobs were made. */
async function expandRanOut(kv: Store, now: number): Promise<number> {
  let made = 0;
  // On while a full pass turned records into jobs: one whose commit failed was changed by
  // someone else, and is read again only if that pass got somewhere.
  for (let [taken, done] = [PASS_LIMIT, 1]; taken === PASS_LIMIT && done > 0;) {
    [taken, done] = [0, 0];
    const ranOut = kv.list<HandedJobs>(
      { prefix: keys.handedJobs(), end: [...keys.handedJobs(), now + 1] },
      { limit: PASS_LIMIT },
    );
    for await (const entry of ranOut) {
      taken++;
      const n = await expandOne(kv, entry);
      if (n === null) continue;
      [made, done] = [made + n, done + 1];
    }
  }
  return made;
}

/** When the earliest lease still running at `now` runs out, or null. */
async function nextRunningOut(kv: Store, now: number): Promise<number | null> {
  const running = kv.list<HandedJobs>({
    prefix: keys.handedJobs(),
    start: [...keys.handedJobs(), now + 1],
  }, { limit: 1 });
  for await (const e of running) return e.value.lease_until;
  return null;
}

/**
 * One record's pending first attempts as free jobs, and the record gone (job move "expand",
 * core/job_states.ts); null when it changed.
 */
async function expandOne(kv: Store, entry: Deno.KvEntry<HandedJobs>): Promise<number | null> {
  const { event_id, created_at, pending } = entry.value;
  const subs = await getAll<Subscription>(kv, pending.map((p) => keys.webhook(p.subscription_id)));
  const jobs = pending
    .filter((_, i) => subs[i].versionstamp !== null)
    .map((p) =>
      firstJob({ id: event_id, created_at }, p.subscription_id, null, p.subscription_version)
    );
  const op = kv.atomic();
  expand(op, entry, jobs);
  return (await op.commit()).ok ? jobs.length : null;
}
