/** What each scenario needs around it: a fresh KV file and scoped subprocesses. */
import type { Proc } from "../procs.ts";
import type { Receiver } from "../receiver.ts";
import type { Measured } from "../report.ts";

/** What every scenario gets: a temp folder of its own and the shared webhook receiver. */
export interface Bench {
  root: string;
  receiver: Receiver;
}

/** A fresh folder for one scenario's KV files (the server's and its baseline's). */
export async function scenarioDir(root: string, name: string): Promise<string> {
  return await Deno.makeTempDir({ dir: root, prefix: `${name}-` });
}

/** Runs `fn` against a started process and always stops it. */
export async function using<T>(started: Promise<Proc>, fn: (p: Proc) => Promise<T>): Promise<T> {
  const proc = await started;
  try {
    return await fn(proc);
  } finally {
    await proc.stop();
  }
}

/** How often each measurement is repeated; the rounds take turns between targets. */
export const ROUNDS = 2;

/**
 * Runs each measurement ROUNDS times (or once in each place, with more than ROUNDS of them),
 * alternating between them, and keeps for each its best rate and its lowest CPU per operation: on
 * a shared machine, interference from elsewhere only ever makes a run slower, so the best run is
 * the closest to what the code can do. Each round starts one further along: where a run comes in
 * a round changes its speed (the first of three drained deliveries 15% faster than the third,
 * whatever it signed), so each measurement takes each place once.
 */
export async function bestOf<K extends string, M extends Measured>(
  runs: Record<K, () => Promise<M>>,
): Promise<Record<K, M>> {
  const best = {} as Record<K, M>;
  const entries = Object.entries(runs) as [K, () => Promise<M>][];
  for (let round = 0; round < Math.max(ROUNDS, entries.length); round++) {
    const turn = [
      ...entries.slice(round % entries.length),
      ...entries.slice(0, round % entries.length),
    ];
    for (const [name, run] of turn) {
      const m = await run();
      const prev = best[name];
      best[name] = !prev ? m : {
        ...(m.rate > prev.rate ? m : prev),
        cpuUs: Math.min(m.cpuUs, prev.cpuUs),
      };
    }
  }
  return best;
}
