import type { AuditAction, AuditEntry } from "../core/types.ts";
import { newId, nowIso } from "../core/ids.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store/store.ts";
import type { Plan } from "./store/plan.ts";

export interface AuditDraft {
  team_id: string;
  action: AuditAction;
  /** null when the system acted (auto-disable) or an operator used the CLI. */
  actor_id: string | null;
  /** Who acted, as people read it: a name, "operator (CLI)" or "system". */
  actor_name: string;
  target_id: string;
  /** What was acted on, as people read it (a token's, subscription's or hook's name). */
  target_name: string;
}

/** Who acted, as an audit entry names them. */
export type AuditBy = Pick<AuditDraft, "actor_id" | "actor_name">;

/** Adds an audit entry to a commit, so the entry exists exactly when the change does. */
export function addAudit(op: Plan, draft: AuditDraft): AuditEntry {
  const entry: AuditEntry = {
    id: newId(),
    ...draft,
    actor_type: draft.actor_id ? "user" : "system",
    created_at: nowIso(),
  };
  op.set(keys.audit(draft.team_id, entry.id), entry);
  return entry;
}

/** A team's audit log, newest first; `before` (an entry id) starts after that entry. */
export async function listAudit(
  kv: Store,
  teamId: string,
  limit: number,
  before?: string,
): Promise<AuditEntry[]> {
  const selector = before
    ? { prefix: keys.audits(teamId), end: keys.audit(teamId, before) }
    : { prefix: keys.audits(teamId) };
  const out: AuditEntry[] = [];
  for await (const e of kv.list<AuditEntry>(selector, { reverse: true, limit })) out.push(e.value);
  return out;
}
