/**
 * Issue 33: bursts of posts into a channel that 100 subscriptions hear, round after round, with
 * a receiver that answers within 200 ms, some later than others. A round is delivered by the
 * engine's own pulls, or it stalled: it waited for a sweep (every 30 s) or the cron (every
 * minute). Counts the rounds that took longer than STALL_MS, what the engine's own watch
 * counted (webhook_delivery_stalls_total), and the jobs it still holds once all is delivered
 * (webhook_jobs_in_memory: room promised to work that never came is where a stall starts).
 */
import { freePort, startService } from "../procs.ts";
import { Receiver } from "../receiver.ts";
import { infoRow, type Row } from "../report.ts";
import { openCtx, seedSubscriptions, seedWorkspace, serviceEnv } from "../seed.ts";
import { post, targetOf } from "../pacing.ts";
import { type Bench, scenarioDir, using } from "./context.ts";

const SUBSCRIPTIONS = 100;
const ROUNDS = 30;
const BURST = 10;
/** Far beyond a round's normal time, well inside the 30 s sweep. */
const STALL_MS = 10_000;
/** How long a stalled round is given to finish (past one cron run) before the soak gives up. */
const GIVE_UP_MS = 90_000;
const METRICS_TOKEN = "bench-metrics-token";

export async function deliveryBursts({ root }: Bench): Promise<Row[]> {
  const receiver = new Receiver((n) => n % 200).start();
  try {
    const dir = await scenarioDir(root, "bursts");
    const kvPath = `${dir}/kv.sqlite3`;
    const ctx = await openCtx(kvPath);
    const seeded = await seedWorkspace(ctx);
    await seedSubscriptions(ctx, seeded, receiver.url, SUBSCRIPTIONS);
    ctx.kv.close();
    // A window smaller than 100 lanes could fill, so pulls meet a full one all the time.
    const env = { ...serviceEnv(kvPath, freePort()), METRICS_TOKEN, WEBHOOKS_MAX_IN_MEMORY: "300" };
    return await using(startService(env), async (p) => {
      const to = targetOf(p, seeded);
      const times: number[] = [];
      let stalled = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const started = performance.now();
        await Promise.all(Array.from({ length: BURST }, (_, i) => post(to, round * BURST + i)));
        const target = (round + 1) * BURST * SUBSCRIPTIONS;
        if (!await receiver.waitFor(target, STALL_MS)) {
          stalled++;
          if (!await receiver.waitFor(target, GIVE_UP_MS)) {
            throw new Error(`round ${round}: ${receiver.count} of ${target} deliveries`);
          }
        }
        times.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 50 + 150 * (round % 3)));
      }
      // Delivered in full: nothing should be held, no room promised to work that never came.
      await new Promise((r) => setTimeout(r, 1_000));
      const { stalls: watched, held } = await scrape(p.url);
      times.sort((a, b) => a - b);
      return [
        {
          scenario: `${ROUNDS} bursts of ${BURST} posts x 100 subscriptions: rounds stalled`,
          value: `${stalled}`,
          baseline: `of ${ROUNDS}`,
          ratio: "",
          target: "0",
          pass: stalled === 0 && watched === 0 && held === 0,
          cpu: `engine's watch: ${watched} stalls; ${held} jobs held after`,
        },
        infoRow(
          "  a round delivered in, median / slowest",
          `${(times[times.length >> 1] / 1000).toFixed(2)} s`,
          `${(times.at(-1)! / 1000).toFixed(2)} s`,
        ),
      ];
    });
  } finally {
    await receiver.stop();
  }
}

/** The stalls the engine counted, and the jobs it holds, as the service's /metrics reports. */
async function scrape(url: string): Promise<{ stalls: number; held: number }> {
  const res = await fetch(`${url}/metrics`, {
    headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
  });
  const text = await res.text();
  const metric = (name: string) =>
    Number(new RegExp(`^${name} (\\d+)`, "m").exec(text)?.[1] ?? NaN);
  return {
    stalls: metric("webhook_delivery_stalls_total"),
    held: metric("webhook_jobs_in_memory"),
  };
}
