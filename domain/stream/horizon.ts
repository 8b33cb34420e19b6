import { ApiError } from "../../core/errors.ts";
import { idTime } from "../../core/ids.ts";
import { EVENT_TTL_MS } from "../../kv/keys.ts";

/**
 * A 410 for a position (a feed cursor, a stream's resume) older than anything still kept:
 * events after it are gone, and going on would skip them silently.
 */
export function requireWithinHorizon(eventId: string): void {
  if (idTime(eventId) >= Date.now() - EVENT_TTL_MS) return;
  throw new ApiError(
    410,
    "Events are kept for 30 days, and this position is older: some events after it are gone. Start again without it, and fill the gap from your own records.",
  );
}
