import type { IncomingWebhook } from "../core/incoming_records.ts";
import { addAudit, type AuditDraft } from "./audit.ts";
import { commitOrThrow, getAll } from "./store/commit.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store/store.ts";
import type { Plan } from "./store/plan.ts";

/** Writes a hook and its indexes into a commit. */
export function putIncoming(op: Plan, hook: IncomingWebhook) {
  op.set(keys.incoming(hook.hash), hook)
    .set(keys.incomingId(hook.id), hook.hash)
    .set(keys.teamIncomingHook(hook.team_id, hook.id), hook.hash);
}

/** Stores a new incoming webhook with its audit entry. */
export async function insertIncoming(
  kv: Store,
  hook: IncomingWebhook,
  audit: AuditDraft,
): Promise<void> {
  const op = kv.atomic().check({ key: keys.incoming(hook.hash), versionstamp: null });
  putIncoming(op, hook);
  addAudit(op, audit);
  await commitOrThrow(op, "create incoming webhook");
}

/** The hook whose secret hashes to `hash`: the one read a post through it costs. */
export async function getIncomingByHash(kv: Store, hash: string) {
  return (await kv.get<IncomingWebhook>(keys.incoming(hash))).value;
}

/** The hook's entry by id, whose versionstamp lets a revoke check nothing moved since. */
export async function getIncomingById(
  kv: Store,
  id: string,
): Promise<Deno.KvEntry<IncomingWebhook> | null> {
  const hash = (await kv.get<string>(keys.incomingId(id))).value;
  if (!hash) return null;
  const entry = await kv.get<IncomingWebhook>(keys.incoming(hash));
  return entry.versionstamp === null ? null : entry;
}

/** Writes `next` over a hook, with its audit entry. Null when it changed since `entry`. */
export async function replaceIncoming(
  kv: Store,
  entry: Deno.KvEntry<IncomingWebhook>,
  { next, audit }: { next: IncomingWebhook; audit: AuditDraft },
): Promise<IncomingWebhook | null> {
  const op = kv.atomic().check(entry);
  putIncoming(op, next);
  addAudit(op, audit);
  return (await op.commit()).ok ? next : null;
}

/** A team's incoming webhooks, oldest first. */
export async function listTeamIncoming(kv: Store, teamId: string): Promise<IncomingWebhook[]> {
  const hashes: Deno.KvKey[] = [];
  for await (const e of kv.list<string>({ prefix: keys.teamIncoming(teamId) })) {
    hashes.push(keys.incoming(e.value));
  }
  return (await getAll<IncomingWebhook>(kv, hashes)).flatMap((e) => e.value ? [e.value] : []);
}
