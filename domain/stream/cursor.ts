import { storedId } from "../../core/ids.ts";
import type { LogPosition } from "../../kv/stream/stream_log.ts";

const CURSOR = /^([0-9a-f]{20})_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** An event's place in its team's log as the stream's SSE id: opaque to clients. */
export const encodeCursor = (p: LogPosition) => `${p.versionstamp}_${p.id}`;

/**
 * What a client resumes from: a stream's SSE id (a position in the log), or an event id (as the
 * event feed and webhooks give them: resolved by the caller). Null when it is neither.
 */
export function decodeCursor(text: string): LogPosition | { eventId: string } | null {
  const m = CURSOR.exec(text);
  if (m) return { versionstamp: m[1], id: m[2] };
  const eventId = storedId(text);
  return eventId ? { eventId } : null;
}
