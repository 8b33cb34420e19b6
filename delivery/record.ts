import type { Settings } from "../core/settings.ts";
import type { Delivery, Subscription } from "../core/webhook_records.ts";
import { type AttemptCommit, commitAttempts, dropIfUnchanged } from "../kv/outbox/settlement.ts";
import { keys } from "../kv/keys.ts";
import type { DeliveryJob } from "../core/webhook_records.ts";
import { dropPending } from "../kv/webhooks.ts";
import type { LatestSubscriptions } from "./latest.ts";
import {
  type Attempted,
  checksFor,
  deliveryOf,
  pastChecks,
  type Pending,
  planCommit,
} from "./attempt_plan.ts";
import { errorFields, log } from "../core/log.ts";
import { backoff } from "../core/retry.ts";
import { getAll } from "../kv/store/commit.ts";
import type { Store } from "../kv/store/store.ts";
import type { HandedShare } from "../kv/outbox/handed_share.ts";
import type { Foreground } from "../core/foreground.ts";

/** A commit allows 10 checks: the subscription's, and one per job or redelivery checked. */
const MAX_CHECKED = 9;
/**
 * Attempts per commit at most. The store has one writer: a request's commit that comes while one
 * of these is written waits for it, so they are kept short. Measured with 100 subscriptions
 * hearing 30 posts a second: commits of up to 100 attempts took 4-6 ms at the median, of up to 20
 * about 2 ms, five times as many.
 */
export const MAX_BATCH = 20;
/**
 * How long recording keeps trying against other processes' commits or a busy store. Once the
 * jobs' leases run out another engine may attempt them again; these records are still written.
 */
const RECORD_DEADLINE_MS = 30_000;
const GATHER_MS = 2;

interface Waiting {
  a: Attempted;
  delivery: Delivery;
  done: () => void;
}

/** One subscription's attempts taken for a commit. */
interface Taken {
  id: string;
  batch: Waiting[];
}

/**
 * Records attempts, many per commit, one commit at a time. Attempts finish concurrently; each
 * subscription has a line of its own, and a commit takes what waits in the lines in turn, as
 * many subscriptions as the commit's checks allow (one each, and one per job whose lease is
 * short), up to MAX_BATCH attempts: a post that a hundred subscriptions hear is recorded in five
 * commits, not a hundred. Each subscription's stats are rewritten under a versionstamp
 * check, and a subscription is in one commit at a time, so these don't fail each other. What
 * finishes during a commit goes in the next, so batches grow with the store's round trip, and
 * the store's writer is never queued up with this process's bookkeeping ahead of a request's
 * write; nor does a commit start while a request is in its first moments (core/foreground.ts).
 * A commit that fails (another process changed a subscription) falls back to one commit
 * per subscription, each re-reading and re-planning its own (see #commitAlone).
 */
export class Recorder {
  readonly #lines = new Map<string, Waiting[]>();
  #backlog = 0;
  #waiting = 0;
  #draining = false;

  constructor(
    private readonly kv: Store,
    private readonly webhooks: Settings["webhooks"],
    private readonly latest: LatestSubscriptions,
    private readonly told: {
      /** Told of each retry once its commit landed. */
      scheduled?: (job: DeliveryJob) => void;
      /** Told when a subscription's streak reached half the limit, or disabled it. */
      troubled?: (sub: Subscription, trouble: NonNullable<AttemptCommit["trouble"]>) => void;
      /** Requests in flight: each commit waits its turn behind them. */
      foreground?: Foreground;
    } = {},
  ) {}

  /** Attempts handed in and not yet recorded. */
  get backlog(): number {
    return this.#backlog;
  }

  /** Resolves once the attempt is recorded (or found moot). Never rejects. */
  record(a: Attempted): Promise<void> {
    this.#backlog++;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#lineOf(a.subscriptionId).push({ a, delivery: deliveryOf(a), done: resolve });
    this.#waiting++;
    if (!this.#draining) void this.#drain();
    return promise;
  }

  #lineOf(id: string): Waiting[] {
    let line = this.#lines.get(id);
    if (!line) this.#lines.set(id, line = []);
    return line;
  }

  async #drain() {
    this.#draining = true;
    while (this.#waiting > 0) {
      // A commit's fixed cost is that of several records: while few wait, a moment's wait lets
      // the attempts in flight share it.
      if (this.#waiting < MAX_CHECKED) await new Promise((r) => setTimeout(r, GATHER_MS));
      await this.told.foreground?.turn();
      const group = this.#take(Date.now());
      this.#waiting -= group.reduce((n, t) => n + t.batch.length, 0);
      await this.#commitGroup(group).catch((e) =>
        // The store failed (closed under a stopping process): what wasn't recorded is still
        // leased, and goes again once its lease runs out. Never an unhandled rejection.
        log.warn("delivery: attempts could not be recorded; they go again", errorFields(e))
      );
      for (const { batch } of group) {
        this.#backlog -= batch.length;
        for (const w of batch) w.done();
      }
    }
    this.#draining = false;
  }

  /** What waits, line by line in turn, within a commit's checks and MAX_BATCH attempts. */
  #take(now: number): Taken[] {
    const group: Taken[] = [];
    let [checks, attempts] = [0, 0];
    const allowed = this.kv.maxChecks;
    const records = new Set<HandedShare>();
    for (const [id, line] of [...this.#lines]) {
      // The subscription's check, and the checked jobs' and records'.
      let [n, mine] = [0, 1];
      while (n < line.length && attempts + n < MAX_BATCH) {
        const { handed } = line[n].a.pending;
        const more = checksFor(line[n].a.pending, now, records);
        if (checks + mine + more > allowed) break;
        mine += more;
        if (handed) records.add(handed);
        n++;
      }
      if (n === 0) break;
      group.push({ id, batch: line.splice(0, n) });
      [checks, attempts] = [checks + mine, attempts + n];
      // To the back of the turn, or gone when empty.
      this.#lines.delete(id);
      if (line.length > 0) this.#lines.set(id, line);
    }
    return group;
  }

  /**
   * One commit for the group, and, when another process changed one of its subscriptions
   * meanwhile (two instances deliver for the same ones), once more with all of them read afresh;
   * where that fails too, one commit per subscription. Never throws.
   */
  async #commitGroup(group: Taken[]) {
    const ids = group.map((t) => t.id);
    for (const fresh of [false, true]) {
      const subs = await this.#subscriptions(ids, fresh).catch(() => null);
      if (!subs || ids.some((id) => !subs.get(id))) break;
      const now = Date.now();
      const plans = group.map((t) => {
        const sub = subs.get(t.id)!;
        const items = t.batch.map((w) => ({ a: w.a, delivery: w.delivery, pending: w.a.pending }));
        return { t, sub, plan: planCommit(this.webhooks, sub, items, now) };
      });
      const versionstamp = await commitAttempts(this.kv, plans.map((p) => p.plan))
        .catch(() => null);
      if (!versionstamp) continue;
      for (const { t, sub, plan } of plans) await this.#landed(t.id, sub, plan, versionstamp);
      return;
    }
    await Promise.all(
      group.map(({ id, batch }) =>
        this.#commitAlone(id, batch).catch((e) =>
          log.error("delivery: recording attempts failed; their jobs are attempted again", {
            subscription_id: id,
            ...errorFields(e),
          })
        )
      ),
    );
  }

  /** The subscriptions as this process knows them lately, read where it doesn't (or `fresh`). */
  async #subscriptions(ids: string[], fresh: boolean) {
    const out = new Map<string, Deno.KvEntry<Subscription> | null>();
    const unknown: string[] = [];
    for (const id of ids) {
      const known = fresh ? undefined : this.latest.current(id);
      if (known) out.set(id, known);
      else unknown.push(id);
    }
    const read = await getAll<Subscription>(this.kv, unknown.map((id) => keys.webhook(id)));
    unknown.forEach((id, i) => out.set(id, this.latest.freshest(read[i])));
    return out;
  }

  /**
   * One commit for one subscription's batch. On a conflict (another process rewrote the
   * subscription's stats) or a store that is busy, backs off, reads the subscription and the
   * jobs again and re-plans: Delivery records are written while the subscription exists, a job
   * only touched if nobody else settled it meanwhile. It keeps at it for RECORD_DEADLINE_MS:
   * giving up loses the record of attempts the receiver may have accepted, and sends them again.
   */
  async #commitAlone(id: string, batch: Waiting[]) {
    let sub = this.latest.current(id) ??
      this.latest.freshest(await this.kv.get<Subscription>(keys.webhook(id)));
    let pendings: (Pending | null)[] = batch.map((w) => w.a.pending);
    const deadline = Date.now() + RECORD_DEADLINE_MS;
    for (let tries = 1;; tries++) {
      if (!sub) {
        await Promise.all(pendings.map((p) => p && dropIfUnchanged(this.kv, p)));
        return;
      }
      const now = Date.now();
      pendings = this.#fitChecks(id, batch, pendings, now);
      const items = batch.map((w, j) => ({ a: w.a, delivery: w.delivery, pending: pendings[j] }));
      const plan = planCommit(this.webhooks, sub, items, now);
      const versionstamp = await commitAttempts(this.kv, [plan]).catch((e) => {
        if (Date.now() >= deadline) throw e;
        return null;
      });
      if (versionstamp) {
        await this.#landed(id, sub, plan, versionstamp);
        return;
      }
      if (Date.now() >= deadline) throw new Error("kept losing to concurrent changes");
      await backoff(tries);
      const read = await this.#reread(id, batch).catch(() => null);
      if (!read) continue;
      sub = this.latest.freshest(read.sub);
      pendings = pendings.map((p, j) => p && read.still[j] ? p : null);
    }
  }

  /**
   * The subscription as it stands now, and which of the batch's jobs are still as read: their
   * entries unchanged, or their first attempts still in their handed-jobs records.
   */
  async #reread(id: string, batch: Waiting[]) {
    const held = batch.map((w) => w.a.pending);
    const plain = held.flatMap((p, i) => p.handed ? [] : [i]);
    const shares = new Set(held.flatMap((p) => p.handed ?? []));
    const [sub, read] = await Promise.all([
      this.kv.get<Subscription>(keys.webhook(id)),
      getAll(this.kv, plain.map((i) => held[i].key)),
      ...[...shares].map((s) => s.refresh(this.kv)),
    ]);
    const still = held.map((p) => p.handed?.holds(id) ?? false);
    plain.forEach((i, j) => still[i] = read[j].versionstamp === held[i].versionstamp);
    return { sub, still };
  }

  /**
   * Keeps the batch within the checks a commit allows: what would need one more is put back at
   * the head of the line, for the next commit. Returns the pendings of what stays.
   */
  #fitChecks(id: string, batch: Waiting[], pendings: (Pending | null)[], now: number) {
    const over = pastChecks(pendings, now, MAX_CHECKED);
    if (over < 0) return pendings;
    const back = batch.splice(over);
    this.#lineOf(id).unshift(...back);
    this.#waiting += back.length;
    if (!this.#draining) void this.#drain();
    return pendings.slice(0, over);
  }

  async #landed(
    id: string,
    sub: Deno.KvEntry<Subscription>,
    plan: AttemptCommit,
    versionstamp: string,
  ) {
    this.latest.wrote({ key: sub.key, value: plan.next, versionstamp });
    for (const { retry } of plan.settle) if (retry) this.told.scheduled?.(retry.job);
    if (plan.trouble) this.told.troubled?.(plan.next, plan.trouble);

    if (plan.audit) {
      log.warn("delivery: subscription disabled after failing in a row", {
        subscription_id: id,
        consecutive_failures: plan.next.consecutive_failures,
      });
      await dropPending(this.kv, id);
    }
  }
}
