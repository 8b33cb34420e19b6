/**
 * The webhook endpoint the service delivers to: in the bench process, on loopback, answering
 * 204 at once. It counts deliveries and notes when each message's deliveries arrived.
 */
import { now } from "./pacing.ts";

export class Receiver {
  count = 0;
  firstAt = 0;
  lastAt = 0;
  /** Arrival times (`now()`, absolute ms) by the message id in the envelope's data. */
  readonly arrivals = new Map<string, number[]>();
  #server: Deno.HttpServer<Deno.NetAddr> | null = null;
  #waiter: { target: number; done: () => void } | null = null;

  get url(): string {
    if (!this.#server) throw new Error("the receiver is not started");
    return `http://127.0.0.1:${this.#server.addr.port}/hook`;
  }

  /** `answerAfterMs`: how long to hold the n-th delivery (from 0) before answering. */
  constructor(private readonly answerAfterMs: (n: number) => number = () => 0) {}

  start(): this {
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      async (req) => {
        const text = await req.text();
        const at = now();
        if (this.count === 0) this.firstAt = at;
        this.lastAt = at;
        this.count++;
        const id = (JSON.parse(text) as { data?: { id?: string } }).data?.id;
        if (id) {
          const seen = this.arrivals.get(id);
          if (seen) seen.push(at);
          else this.arrivals.set(id, [at]);
        }
        const wait = this.answerAfterMs(this.count - 1);
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (this.#waiter && this.count >= this.#waiter.target) this.#waiter.done();
        return new Response(null, { status: 204 });
      },
    );
    return this;
  }

  /** Forgets what arrived so far. */
  reset(): void {
    this.count = 0;
    this.firstAt = this.lastAt = 0;
    this.arrivals.clear();
  }

  /** Resolves true once `target` deliveries arrived in all, false after `timeoutMs`. */
  async waitFor(target: number, timeoutMs: number): Promise<boolean> {
    if (this.count >= target) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const reached = await Promise.race([
      new Promise<boolean>((resolve) => this.#waiter = { target, done: () => resolve(true) }),
      new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), timeoutMs)),
    ]);
    clearTimeout(timer);
    this.#waiter = null;
    return reached;
  }

  async stop(): Promise<void> {
    await this.#server?.shutdown();
  }
}
