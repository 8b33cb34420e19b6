import type { Ctx } from "../core/context.ts";
import type { AuditEntry, User } from "../core/types.ts";
import { isUuid } from "../core/ids.ts";
import { listAudit } from "../kv/audit.ts";
import { getAll } from "../kv/commit.ts";
import { keys } from "../kv/keys.ts";

export interface AuditPage {
  entries: AuditEntry[];
  /** The people who acted, by id, to name them. */
  actors: Map<string, string>;
  /** The cursor of the next, older page; null on the last. */
  before: string | null;
}

/** One page of a team's audit log, newest first. A malformed cursor starts from the newest. */
export async function readAuditLog(
  ctx: Ctx,
  teamId: string,
  opts: { limit: number; before?: string },
): Promise<AuditPage> {
  const before = opts.before && isUuid(opts.before) ? opts.before.toLowerCase() : undefined;
  const page = await listAudit(ctx.kv, teamId, opts.limit + 1, before);
  const entries = page.slice(0, opts.limit);
  const ids = [...new Set(entries.flatMap((e) => e.actor_id ? [e.actor_id] : []))];
  const users = await getAll<User>(ctx.kv, ids.map((id) => keys.user(id)));
  return {
    entries,
    actors: new Map(users.flatMap((u) => u.value ? [[u.value.id, u.value.name]] : [])),
    before: page.length > opts.limit ? entries[entries.length - 1].id : null,
  };
}
