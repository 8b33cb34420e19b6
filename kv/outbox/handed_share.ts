import type { DeliveryJob, HandedJobs, Redelivery } from "../../core/webhook_records.ts";
import { log } from "../../core/log.ts";
import { keys } from "../keys.ts";
import { enqueue, type MoveWriter, signal, takeOut } from "./job_moves.ts";
import type { Handed, Plan } from "../store/plan.ts";
import type { Store } from "../store/store.ts";

/**
 * A job or redelivery this process holds. A first attempt still in a handed-jobs record carries
 * the record's share; its key names the job it becomes should it need one, not yet written.
 */
export type Work<T extends DeliveryJob | Redelivery = DeliveryJob | Redelivery> =
  & Deno.KvEntry<T>
  & { handed?: HandedShare };

/**
 * What a commit handed over, as this process holds it: one share of the record, and each first
 * attempt as the job it would be.
 */
export function heldFrom(handed: Handed, versionstamp: string) {
  const share = new HandedShare({ ...handed.record, versionstamp });
  const held = (value: DeliveryJob): Work<DeliveryJob> => ({
    key: keys.job(value.subscription_id, value.event_id),
    value,
    versionstamp,
    handed: share,
  });
  return { jobs: handed.jobs.map(held), waiting: handed.waiting.map(held) };
}

/**
 * Tries of a change to a record beyond one per first attempt it holds. While the lease runs, a
 * change fails only when another commit of this process changed the record first, and each such
 * commit takes at least one first attempt out of it (a settlement) or deletes it (expanded once
 * the lease ran out): a change that keeps failing is making way for others, and comes through.
 */
const SPARE_TRIES = 5;

/**
 * This process's hold on one handed-jobs record it wrote (see HandedJobs): while the lease runs
 * it is the record's one writer, so it knows the record as it stands without reading it. Each
 * change checks the record as last known: once the lease ran out another engine may have turned
 * it into jobs, and the change then fails instead of bringing attempts back.
 */
export class HandedShare {
  #entry: Deno.KvEntry<HandedJobs>;

  constructor(entry: Deno.KvEntry<HandedJobs>) {
    this.#entry = entry;
  }

  get leaseUntil(): number {
    return this.#entry.value.lease_until;
  }

  /** Whether the subscription's first attempt is still in the record, as last known. */
  holds(subscriptionId: string): boolean {
    return this.#entry.value.pending.some((p) => p.subscription_id === subscriptionId);
  }

  /**
   * Adds to `op` the record without `ids`' first attempts: rewritten with the rest, or deleted
   * with the last, under a check of the record as last known. Returns what it becomes, for
   * `landed`.
   */
  takeOut(op: MoveWriter, ids: Iterable<string>): HandedJobs | null {
    return takeOut(op, this.#entry, new Set(ids));
  }

  /** A commit made with `takeOut` landed: the record is now `next` (null: deleted). */
  landed(next: HandedJobs | null, versionstamp: string): void {
    const { key, value, versionstamp: known } = this.#entry;
    if (versionstamp <= known) return;
    this.#entry = { key, value: next ?? { ...value, pending: [] }, versionstamp };
  }

  /**
   * The record as read now, unless a commit of this process landed a later one meanwhile. Gone
   * (deleted with its last, or expanded by another engine) it holds nothing: a key once deleted is
   * never written again.
   */
  async refresh(kv: Store): Promise<void> {
    const read = await kv.get<HandedJobs>(this.#entry.key);
    if (read.versionstamp !== null) return this.landed(read.value, read.versionstamp);
    this.#entry = { ...this.#entry, value: { ...this.#entry.value, pending: [] } };
  }

  /**
   * Moves first attempts out of the record into jobs of their own, leased until `leaseUntil`
   * (an attempt that waited too long for its lease to cover it), or free for any engine (null:
   * this process stops). Returns the jobs as written, leaving out those no longer in the record
   * (another engine made them jobs when the lease ran out).
   */
  async toJobs(
    kv: Store,
    jobs: DeliveryJob[],
    leaseUntil: number | null,
  ): Promise<Deno.KvEntry<DeliveryJob>[]> {
    return await this.#change(kv, jobs.map((j) => j.subscription_id), (op, held) => {
      const made = jobs.filter((j) => held.has(j.subscription_id))
        .map((j) => ({
          key: keys.job(j.subscription_id, j.event_id),
          value: { ...j, lease_until: leaseUntil },
        }));
      for (const { value } of made) enqueue(op, value);
      if (leaseUntil === null && made.length > 0) signal(op);
      return made;
    });
  }

  /** Takes first attempts that will not be made out of the record (their subscription is gone). */
  async drop(kv: Store, ids: string[]): Promise<void> {
    await this.#change(kv, ids, () => []);
  }

  /**
   * One change to the record, tried again as it is now where someone else changed it. Under load
   * the Recorder settles attempts out of the same record many times a second: with a fixed few
   * tries, first attempts that waited out their turn here stayed in it, leased to this process
   * and attempted by nobody, until the lease ran out (25 s, issue 33's test caught it).
   */
  async #change<T>(
    kv: Store,
    ids: string[],
    add: (op: Plan, held: Set<string>) => { key: Deno.KvKey; value: T }[],
  ): Promise<Deno.KvEntry<T>[]> {
    const tries = this.#entry.value.pending.length + SPARE_TRIES;
    for (let tried = 0; tried < tries; tried++) {
      const held = new Set(ids.filter((id) => this.holds(id)));
      if (held.size === 0) return [];
      const op = kv.atomic();
      const next = this.takeOut(op, held);
      const made = add(op, held);
      const res = await op.commit();
      if (res.ok) {
        this.landed(next, res.versionstamp);
        return made.map((m) => ({ ...m, versionstamp: res.versionstamp }));
      }
      await this.refresh(kv);
    }
    // Only a writer outside this release's rules gets here: what stays is expanded at lease end.
    log.warn("delivery: first attempts stay leased in their record until its lease runs out", {
      event_id: this.#entry.value.event_id,
      lease_until: new Date(this.leaseUntil).toISOString(),
    });
    return [];
  }
}
