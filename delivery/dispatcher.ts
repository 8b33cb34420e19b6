/** One unit of work: `key` makes it unique, `lane` is what it shares a concurrency bound with. */
export interface Task {
  key: string;
  lane: string;
  /**
   * Does the work. Resolves when the task no longer needs its slot, optionally with `rest`:
   * work that finishes later without a slot (recording), while the key stays taken.
   */
  run(): Promise<{ rest?: Promise<void> } | void>;
}

interface Lane {
  waiting: Task[];
  running: number;
  ready: boolean;
}

/**
 * Runs tasks concurrently under a global bound and a small bound per lane (per subscription),
 * taking lanes in turn: an endpoint that is slow or failing holds at most `perLane` slots and
 * never delays the other subscriptions. A task already waiting or running is not added twice.
 */
export class Dispatcher {
  readonly #lanes = new Map<string, Lane>();
  readonly #ready: string[] = [];
  readonly #known = new Set<string>();
  readonly #unfinished = new Set<Promise<void>>();
  #active = 0;
  #stopped = false;

  constructor(readonly limits: { global: number; perLane: number }) {}

  /** Adds a task; false when the same key is already waiting or running. */
  submit(task: Task): boolean {
    if (this.#stopped || this.#known.has(task.key)) return false;
    this.#known.add(task.key);
    let lane = this.#lanes.get(task.lane);
    if (!lane) {
      lane = { waiting: [], running: 0, ready: false };
      this.#lanes.set(task.lane, lane);
    }
    lane.waiting.push(task);
    this.#markReady(task.lane, lane);
    this.#pump();
    return true;
  }

  /** Resolves once nothing waits or runs. */
  async idle(): Promise<void> {
    while (this.#unfinished.size > 0) await Promise.allSettled([...this.#unfinished]);
  }

  /** Drops what waits and lets what runs finish. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const lane of this.#lanes.values()) {
      for (const task of lane.waiting) this.#known.delete(task.key);
      lane.waiting = [];
    }
    await this.idle();
  }

  #markReady(name: string, lane: Lane) {
    if (!lane.ready && lane.waiting.length > 0 && lane.running < this.limits.perLane) {
      lane.ready = true;
      this.#ready.push(name);
    }
  }

  #pump() {
    while (this.#active < this.limits.global && this.#ready.length > 0) {
      const name = this.#ready.shift()!;
      const lane = this.#lanes.get(name)!;
      lane.ready = false;
      const task = lane.waiting.shift();
      if (task) this.#start(name, lane, task);
      this.#markReady(name, lane);
    }
  }

  #start(name: string, lane: Lane, task: Task) {
    this.#active++;
    lane.running++;
    const finished: Promise<void> = task.run()
      .finally(() => this.#release(name, lane))
      .then((done) => done?.rest)
      .catch((e) => console.error("delivery: a task failed unexpectedly:", e))
      .finally(() => {
        this.#unfinished.delete(finished);
        this.#known.delete(task.key);
      });
    this.#unfinished.add(finished);
  }

  #release(name: string, lane: Lane) {
    this.#active--;
    lane.running--;
    if (lane.running === 0 && lane.waiting.length === 0) this.#lanes.delete(name);
    else this.#markReady(name, lane);
    this.#pump();
  }
}
