import { errorFields, log } from "../core/log.ts";
import type { DeliveryEngine } from "./engine_contract.ts";

/** Every minute: on Deno Deploy the finest a cron schedule goes. */
export const CRON_SCHEDULE = "* * * * *";
export const CRON_NAME = "deliver due webhooks";

/**
 * How long one run may go on delivering: well within the minute, so a run ends before the
 * next begins (Deno Deploy never overlaps runs of one cron, and leases keep a slow one safe).
 */
export const CRON_BUDGET_MS = 45_000;

/**
 * The every-minute cron task: sends what is due and free (retries, redeliveries, recovers, work
 * a dead instance left) under the engine's leases, within CRON_BUDGET_MS, and returns. Where
 * timers run, the engine has usually sent it all already and this finds nothing. Never throws:
 * a failed run is logged, and the next one finds what it left.
 */
export async function deliverDue(
  engine: DeliveryEngine | null,
  budgetMs = CRON_BUDGET_MS,
): Promise<void> {
  if (!engine) return;
  try {
    const run = await engine.runDue(budgetMs);
    if (run.attempted > 0 || run.cutShort) {
      log.info("cron: delivered what was due", {
        attempted: run.attempted,
        left_for_next_run: run.cutShort,
      });
    }
  } catch (e) {
    log.error("cron: delivering what was due failed", errorFields(e));
  }
}
