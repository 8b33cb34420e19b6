import { ConflictError } from "../../core/errors.ts";
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";

/** A window's count is kept this long: past its minute nobody reads it. */
const KEEP_MS = 120_000;
const MAX_TRIES = 20;

/**
 * Claims up to `want(claimed)` more requests of `name`'s window for this process, where
 * `claimed` is what every process has claimed so far: read, then written with a check, so two
 * processes never claim the same part of the limit. Returns the new total and how many were won.
 */
export async function claimRequests(
  kv: Store,
  window: number,
  name: string,
  want: (claimed: number) => number,
): Promise<{ claimed: number; won: number }> {
  const key = keys.rateCount(window, name);
  for (let i = 0; i < MAX_TRIES; i++) {
    const entry = await kv.get<number>(key);
    const claimed = entry.value ?? 0;
    const won = want(claimed);
    if (won <= 0) return { claimed, won: 0 };
    const res = await kv.atomic().check(entry).set(key, claimed + won, { expireIn: KEEP_MS })
      .commit();
    if (res.ok) return { claimed: claimed + won, won };
  }
  throw new ConflictError("rate limit");
}
