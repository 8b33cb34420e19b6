import { errorFields, log } from "../core/log.ts";
import { type Backlog, measureBacklog } from "../kv/outbox/backlog.ts";
import type { Store } from "../kv/store/store.ts";

/** Delivery lag made visible: what waits in KV, and for how long the oldest has. */
export class BacklogReport {
  /** The backlog as last measured, with when. */
  last: (Backlog & { measuredAt: number }) | null = null;

  /** `held`: the jobs this process holds in memory, for the log line. */
  constructor(private readonly kv: Store, private readonly held: () => number) {}

  /** Measures the backlog, and logs it while there is one. */
  async measure(): Promise<void> {
    try {
      const last = { ...await measureBacklog(this.kv), measuredAt: Date.now() };
      this.last = last;
      if (last.pending === 0) return;
      const age = (Date.now() - Date.parse(last.oldestCreatedAt!)) / 1000;
      log.info(
        `delivery: backlog of ${last.pending} pending jobs, the oldest ${
          age.toFixed(1)
        } s old; ${this.held()} in this process's memory`,
        { pending: last.pending, oldest_age_s: age, in_memory: this.held() },
      );
    } catch (e) {
      log.error("delivery: measuring the backlog failed", errorFields(e));
    }
  }
}
