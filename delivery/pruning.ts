import { RecentMap } from "../core/recent_map.ts";
import { oldestBeyond } from "../kv/deliveries.ts";
import type { AttemptCommit } from "../kv/settlement.ts";
import type { Store } from "../kv/store.ts";
import { KEEP_DELIVERIES } from "./sweeper.ts";

/**
 * Records a subscription may get past its latest KEEP_DELIVERIES before a commit prunes them.
 * Reading the counts and the oldest records for every commit (a read and a list for each of its
 * subscriptions) doubled what the store's writer did per delivery; once per this many records it
 * is a tenth of that.
 */
export const PRUNE_EVERY = 10;

/**
 * Which commits of Delivery records also delete the oldest beyond the latest 100: one for a
 * subscription once this process committed PRUNE_EVERY records for it since it last looked (or
 * since it started), so that beyond the latest 100 at most that many of each process's records
 * wait for the next look, between sweeps too.
 */
export class Pruning {
  /** Records committed for each subscription since a commit last looked. */
  readonly #since = new RecentMap<string, number>(4_096);

  constructor(private readonly kv: Store) {}

  /**
   * Whether a commit of `adding` records for subscription `id` looks: it then carries one more
   * check (the pruned count), which the commit's room for checks must allow.
   */
  due(id: string, adding: number): boolean {
    return (this.#since.get(id) ?? 0) + adding > PRUNE_EVERY;
  }

  /** Sets the records `plan` deletes, when it is its turn to look. A failed read leaves them. */
  async plan(plan: AttemptCommit): Promise<void> {
    if (!this.due(plan.next.id, plan.deliveries.length)) return;
    plan.prune = await oldestBeyond(this.kv, plan.next.id, {
      adding: plan.deliveries.length,
      keep: KEEP_DELIVERIES,
    }).catch(() => ({ keys: [] }));
  }

  /** Counts what a commit that landed wrote, from none again where it looked. */
  landed(plan: AttemptCommit): void {
    const since = this.#since.get(plan.next.id) ?? 0;
    this.#since.set(plan.next.id, plan.prune ? 0 : since + plan.deliveries.length);
  }
}
