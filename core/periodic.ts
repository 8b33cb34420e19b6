/**
 * Work a process does every so often where timers run (`start`), and when a cron task asks
 * (`runDue`) where they don't (Deno Deploy): one look at a time, its failure logged, not thrown.
 */
import { errorFields, log } from "./log.ts";

export class Periodic {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<unknown> | null = null;
  #stopped = false;

  constructor(
    private readonly look: (budgetMs: number) => Promise<unknown>,
    private readonly opts: { everyMs: number; what: string },
  ) {}

  /** Looks every `everyMs`, a look's own time apart, until `stop`. */
  start(): void {
    const tick = async () => {
      await this.runDue(60_000);
      if (!this.#stopped) this.#timer = setTimeout(tick, this.opts.everyMs);
    };
    this.#timer = setTimeout(tick, this.opts.everyMs);
  }

  /** One look for up to `budgetMs`, never two at once in this process. */
  runDue(budgetMs: number): Promise<unknown> {
    this.#running ??= this.look(budgetMs)
      .catch((e) => log.warn(`${this.opts.what}: a look failed`, errorFields(e)))
      .finally(() => this.#running = null);
    return this.#running;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
