/**
 * Slack's cursor paging over a list read whole (a channel's members, the team's people): the
 * cursor is the offset, opaque to clients as Slack's are; `""` when there is no next page.
 */
import { SlackError } from "./errors.ts";

const encode = (offset: number) => btoa(`offset:${offset}`);

function decode(cursor: string): number {
  try {
    const m = /^offset:(\d{1,9})$/.exec(atob(cursor));
    if (m) return Number(m[1]);
  } catch {
    // Not base64: an invalid cursor, as Slack says it.
  }
  throw new SlackError("invalid_cursor");
}

/** A page of `items` from the cursor's offset, and the next page's cursor (null on the last). */
export function offsetPage<T>(
  items: T[],
  { limit, cursor }: { limit: number; cursor?: string },
): { items: T[]; next: string | null } {
  const start = cursor ? decode(cursor) : 0;
  const end = start + limit;
  return { items: items.slice(start, end), next: end < items.length ? encode(end) : null };
}
