/** Open modals (domain/apps/views.ts): a person's stack of views from one app, by any view's id. */
import type { ViewStack } from "../../core/app_records.ts";
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";
import type { Plan } from "../store/plan.ts";

const keptFor = (stack: ViewStack) => Math.max(1, Date.parse(stack.expires_at) - Date.now());

/** Each view's indexes, expiring with its stack: to its stack, and by its app's `external_id`. */
export function indexViews(
  op: Pick<Plan, "set">,
  stack: ViewStack,
  expireIn: number | undefined,
): void {
  for (const v of stack.views) {
    op.set(keys.view(v.id), stack.id, { expireIn });
    if (v.external_id) {
      op.set(keys.viewExternal(stack.app_id, stack.team_id, v.external_id), v.id, { expireIn });
    }
  }
}

/** The view an app named by its `external_id` in a team, or null. */
export async function viewIdByExternal(
  kv: Store,
  { appId, teamId, externalId }: { appId: string; teamId: string; externalId: string },
): Promise<string | null> {
  return (await kv.get<string>(keys.viewExternal(appId, teamId, externalId))).value;
}

/** A stack by its own id, as stored (with what a change must check), or null. */
export async function stackById(
  kv: Store,
  stackId: string,
): Promise<Deno.KvEntry<ViewStack> | null> {
  const entry = await kv.get<ViewStack>(keys.viewStack(stackId));
  return entry.value ? entry as Deno.KvEntry<ViewStack> : null;
}

/** The stack a view is in, as stored (with what a change must check), or null. */
export async function stackOf(
  kv: Store,
  viewId: string,
): Promise<Deno.KvEntry<ViewStack> | null> {
  const stackId = (await kv.get<string>(keys.view(viewId))).value;
  if (!stackId) return null;
  const entry = await kv.get<ViewStack>(keys.viewStack(stackId));
  return entry.value ? entry as Deno.KvEntry<ViewStack> : null;
}

/**
 * Writes a stack as it now is, with an index for each of its views, unless it changed since
 * `entry` was read (null: a new stack): false then. `also` adds to the commit (a trigger spent).
 */
export async function writeStack(
  kv: Store,
  { entry, stack, also }: {
    entry: Deno.KvEntry<ViewStack> | null;
    stack: ViewStack;
    also?: (op: Plan) => void;
  },
): Promise<boolean> {
  const expireIn = keptFor(stack);
  const op = kv.atomic().check(entry ?? { key: keys.viewStack(stack.id), versionstamp: null });
  op.set(keys.viewStack(stack.id), stack, { expireIn });
  indexViews(op, stack, expireIn);
  also?.(op);
  return (await op.commit()).ok;
}
