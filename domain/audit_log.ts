import type { Ctx } from "./context.ts";
import { authorize } from "./policy.ts";
import { type Actor } from "./principals.ts";
import type { NamedAuditEntry, User } from "../core/types.ts";
import { storedId } from "../core/ids.ts";
import { listAudit } from "../kv/audit.ts";
import { getAll } from "../kv/store/commit.ts";
import { keys } from "../kv/keys.ts";

export interface AuditPage {
  entries: NamedAuditEntry[];
  /** The cursor of the next, older page; null on the last. */
  before: string | null;
}

/**
 * One page of a team's audit log, newest first, each entry naming who acted and what it acted on
 * beside their ids. Entries written before names were kept get their actor's name from the user
 * (as named when it acted), or "system". A malformed cursor starts from the newest.
 */
export async function readAuditLog(
  ctx: Ctx,
  teamId: string,
  opts: { limit: number; before?: string; actor: Actor },
): Promise<AuditPage> {
  authorize(opts.actor, "team.administer", { team_id: teamId });
  const before = storedId(opts.before) ?? undefined;
  const page = await listAudit(ctx.kv, teamId, opts.limit + 1, before);
  const entries = page.slice(0, opts.limit);
  const unnamed = entries.filter((e) => !e.actor_name && e.actor_id).map((e) => e.actor_id!);
  const users = await getAll<User>(ctx.kv, [...new Set(unnamed)].map((id) => keys.user(id)));
  const names = new Map(users.flatMap((u) => u.value ? [[u.value.id, u.value.name]] : []));
  return {
    entries: entries.map((e) => ({
      ...e,
      actor_name: e.actor_name ??
        (e.actor_id ? names.get(e.actor_id) ?? e.actor_id : "system"),
      target_name: e.target_name ?? null,
    })),
    before: page.length > opts.limit ? entries[entries.length - 1].id : null,
  };
}
