/**
 * How long a process keeps the turn while it has commits to make, once it has it. Short: the
 * other processes wait about this long; long enough that a busy process takes it a few hundred
 * times a second, not once per commit.
 */
const TURN_MS = 5;
/**
 * How long a commit waits for its turn. A process that holds the turn and stops (suspended, its
 * event loop blocked) must not stop the others: past this, commits go ahead without turns for a
 * while, as they did before, and SQLite's own lock and the commit's retries settle who writes.
 */
const WAIT_MS = 1_000;
const WITHOUT_TURNS_MS = 10_000;
/**
 * How long a process keeps the turn once its commits are done, for its next one: a channel's
 * batches follow one another, and a lost batch goes again at once (kv/store/appender.ts). Handing the
 * turn over between two of them would put the other process's commit in between, which fails the
 * second's checks when both write the same keys. Measured with two instances posting into one
 * channel: going again at once without this pause, p99 250 ms; with it, 45–50 ms, and a quarter as
 * many posts committed twice as backing off did.
 */
const IDLE_MS = 2;

/**
 * Writers of one local store file take turns, across processes. SQLite lets one process write at
 * a time, and one that finds the file locked sleeps and polls, in naps growing to 100 ms, while
 * the holder, ready again first, usually takes it back: measured with two processes committing
 * flat out, a commit now and then waited 0.1–2 s, longer than the 503 deadline. Here a process
 * takes an advisory lock (flock) on a file beside the store before it commits, which the kernel
 * hands to a waiting process the moment it is free; it keeps it while its commits follow one
 * another, for TURN_MS at most, then lets go and lines up again behind whoever waited.
 *
 * It orders writes, nothing more: every commit is still atomic and checked by the store itself,
 * so a process that does not take turns (an older version, a tool) only makes others wait as
 * before. The lock ends with the process that holds it, however it ends.
 */
export class WriteTurns {
  readonly #file: Deno.FsFile;
  #held = false;
  #since = 0;
  #running = 0;
  #waiting: (() => void)[] = [];
  #locking = false;
  #waitTimer: ReturnType<typeof setTimeout> | undefined;
  /** Set just after letting go: the next lock waits a moment (see #release). */
  #restTimer: ReturnType<typeof setTimeout> | undefined;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #withoutUntil = 0;

  constructor(path: string) {
    this.#file = Deno.openSync(path, { read: true, write: true, create: true, mode: 0o600 });
  }

  /** Runs `commit` in this process's turn. */
  async run<T>(commit: () => Promise<T>): Promise<T> {
    if (!this.#inTurn()) {
      // A turn that ran out ends now, commits still under way or not (see #release).
      if (this.#held) this.#release();
      await this.#nextTurn();
    }
    this.#running++;
    try {
      return await commit();
    } finally {
      if (--this.#running === 0 && this.#held) this.#releaseIfIdle();
    }
  }

  /** Lets go of the file; commits still to come go ahead without turns. */
  close(): void {
    this.#withoutUntil = Infinity;
    this.#wake();
    this.#held = false;
    clearTimeout(this.#waitTimer);
    clearTimeout(this.#restTimer);
    clearTimeout(this.#idleTimer);
    // The lock, held or still being waited for, is let go with the file.
    this.#file.close();
  }

  #inTurn(): boolean {
    if (Date.now() < this.#withoutUntil) return true;
    return this.#held && performance.now() - this.#since < TURN_MS;
  }

  #nextTurn(): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#waiting.push(resolve);
    if (!this.#held && this.#restTimer === undefined) this.#lock();
    return promise;
  }

  /**
   * Waits for the lock, if no wait is under way, and in any case for at most WAIT_MS more: a
   * wait that outlasted the time without turns must not hold the next commits (a holder that
   * stays stopped for longer than WAIT_MS and WITHOUT_TURNS_MS together).
   */
  #lock() {
    this.#limitWait();
    if (this.#locking) return;
    this.#locking = true;
    const taken = (ok: boolean) => {
      clearTimeout(this.#waitTimer);
      this.#waitTimer = undefined;
      this.#locking = false;
      // The file was closed, or can't be locked here: without turns, as before.
      if (!ok) this.#withoutUntil = Infinity;
      if (ok && this.#waiting.length > 0) {
        this.#held = true;
        this.#since = performance.now();
      } else if (ok) {
        // Taken after the commits that wanted it went ahead without it.
        this.#unlock();
      }
      this.#wake();
    };
    this.#file.lock(true).then(() => taken(true), () => taken(false));
  }

  #limitWait() {
    this.#waitTimer ??= setTimeout(() => {
      this.#waitTimer = undefined;
      this.#withoutUntil = Date.now() + WITHOUT_TURNS_MS;
      this.#wake();
    }, WAIT_MS);
  }

  #releaseIfIdle() {
    this.#idleTimer ??= setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#running === 0 && this.#held) this.#release();
    }, IDLE_MS);
  }

  /**
   * Lets go, with commits possibly still under way: the next process's first commit may wait a
   * moment for them in SQLite, but this one's writer is never left idle while it is alone.
   */
  #release() {
    this.#held = false;
    this.#unlock();
    // A moment's gap, so a process waiting in the kernel takes the lock before this one does.
    this.#restTimer = setTimeout(() => {
      this.#restTimer = undefined;
      if (this.#waiting.length > 0) this.#lock();
    }, 0);
  }

  #unlock() {
    try {
      this.#file.unlockSync();
    } catch {
      // Closed meanwhile: the lock went with the file.
    }
  }

  #wake() {
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
}
