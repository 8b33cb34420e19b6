import type { Store } from "../kv/store/store.ts";
import { liveInstances } from "../kv/service/service_record.ts";

/** How old, at most, what a process knows of the others may be. */
const LOOK_EVERY_MS = 1_000;

/**
 * Whether another instance runs on this store, as the instances' own records (domain/data/
 * service.ts) said within the last second. Until the first look, and when a look fails, it says
 * yes: handing work to others then costs a little, keeping it from them could hold it up.
 */
export class Peers {
  #others = true;
  #lookedAt = -Infinity;
  #looking = false;

  constructor(private readonly kv: Store) {}

  othersRun(now = Date.now()): boolean {
    if (!this.#looking && now - this.#lookedAt >= LOOK_EVERY_MS) void this.#look(now);
    return this.#others;
  }

  async #look(now: number) {
    this.#looking = true;
    this.#lookedAt = now;
    try {
      // This instance's own record is among them.
      this.#others = (await liveInstances(this.kv, now)).length > 1;
    } catch {
      this.#others = true;
    } finally {
      this.#looking = false;
    }
  }
}
