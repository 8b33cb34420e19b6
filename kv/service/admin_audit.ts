/**
 * What the operator's admin path did (decisions.md, "Operating a deployed service from
 * anywhere"): each request that ran a command, and each refused, with where it came from. A
 * service-wide log beside the teams' own, since a refused request names no team.
 */
import { newId, nowIso } from "../../core/ids.ts";
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";
import type { Plan } from "../store/plan.ts";

/** Entries are kept this long; `expireIn` is lazy, so listing checks `created_at` too. */
export const ADMIN_AUDIT_KEPT_MS = 90 * 24 * 3_600_000;

export interface AdminAuditEntry {
  id: string;
  /** The command asked for, as the request's path named it. */
  command: string;
  /** The client address (the last hop of `X-Forwarded-For` only when `TRUST_PROXY=true`). */
  address: string;
  /** accepted: signed and run (its answer is the CLI's); refused: never ran (401). */
  outcome: "accepted" | "refused";
  /** Why a request was refused (stale, replayed, bad signature, unsigned); never its headers. */
  why?: string;
  created_at: string;
}

/**
 * Adds an entry made now to a commit, kept ADMIN_AUDIT_KEPT_MS: the commit that takes a request's
 * nonce, or one of its own for a refused request (which takes none), as kv/audit.ts's `addAudit`.
 */
export function addAdminAudit(op: Plan, draft: Omit<AdminAuditEntry, "id" | "created_at">): Plan {
  const entry: AdminAuditEntry = { id: newId(), ...draft, created_at: nowIso() };
  return op.set(keys.adminAudit(entry.id), entry, { expireIn: ADMIN_AUDIT_KEPT_MS });
}

/** The newest `limit` entries, newest first. */
export async function listAdminAudit(kv: Store, limit: number): Promise<AdminAuditEntry[]> {
  const since = Date.now() - ADMIN_AUDIT_KEPT_MS;
  const out: AdminAuditEntry[] = [];
  const entries = kv.list<AdminAuditEntry>({ prefix: keys.adminAudits() }, { reverse: true });
  for await (const { value } of entries) {
    if (Date.parse(value.created_at) < since) break;
    out.push(value);
    if (out.length === limit) break;
  }
  return out;
}
