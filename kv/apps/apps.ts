import type { App, AppInstall, AuthorizationCode } from "../../core/app_records.ts";
import { commitOrThrow } from "../store/commit.ts";
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";
import type { Plan } from "../store/plan.ts";

/** Stores a new app; its client_id is unique. */
export async function insertApp(kv: Store, app: App): Promise<void> {
  const op = kv.atomic()
    .check({ key: keys.appClient(app.client_id), versionstamp: null })
    .set(keys.app(app.id), app)
    .set(keys.appClient(app.client_id), app.id);
  await commitOrThrow(op, "create app");
}

export const getApp = (kv: Store, id: string) => kv.get<App>(keys.app(id));

/** The app a `client_id` names, or null. */
export async function getAppByClientId(kv: Store, clientId: string): Promise<App | null> {
  const id = (await kv.get<string>(keys.appClient(clientId))).value;
  return id ? (await getApp(kv, id)).value : null;
}

export async function listAllApps(kv: Store): Promise<App[]> {
  const out: App[] = [];
  for await (const e of kv.list<App>({ prefix: keys.apps() })) out.push(e.value);
  return out;
}

/** Replaces an app (a new secret) unless it changed since `entry`. */
export async function replaceApp(kv: Store, entry: Deno.KvEntry<App>, next: App) {
  return (await kv.atomic().check(entry).set(keys.app(next.id), next).commit()).ok;
}

/** Removes an app: its client_id stops working. Its installs stay as records. */
export async function deleteApp(kv: Store, entry: Deno.KvEntry<App>) {
  const op = kv.atomic().check(entry).delete(keys.app(entry.value.id))
    .delete(keys.appClient(entry.value.client_id));
  return (await op.commit()).ok;
}

/** How long a code is kept after it expires, so that one presented again is known as used. */
export const CODE_KEPT_MS = 24 * 60 * 60_000;

/** Stores a new code; `keepMs` tidies it away CODE_KEPT_MS after it expires. */
export async function insertCode(
  kv: Store,
  hash: string,
  code: AuthorizationCode,
  keepMs: number,
): Promise<void> {
  const op = kv.atomic().check({ key: keys.oauthCode(hash), versionstamp: null })
    .set(keys.oauthCode(hash), code, { expireIn: keepMs });
  await commitOrThrow(op, "create authorization code");
}

export const getCode = (kv: Store, hash: string) => kv.get<AuthorizationCode>(keys.oauthCode(hash));

/**
 * Rewrites a code unless it changed since `entry` was read (on any instance): false when it did.
 * Marking it used, what it issued, or that it was presented again all go through here.
 */
export async function rewriteCode(
  kv: Store,
  entry: Deno.KvEntry<AuthorizationCode>,
  next: AuthorizationCode,
  keepMs: number,
): Promise<boolean> {
  const op = kv.atomic().check(entry).set(entry.key, next, { expireIn: keepMs });
  return (await op.commit()).ok;
}

/** Marks a code as `next` (used, with what it issued) in a commit that checks it is as read. */
export function spendCode(
  op: Plan,
  { entry, next, keepMs }: {
    entry: Deno.KvEntry<AuthorizationCode>;
    next: AuthorizationCode;
    keepMs: number;
  },
) {
  op.check(entry).set(entry.key, next, { expireIn: keepMs });
}

export const getInstall = (kv: Store, teamId: string, appId: string) =>
  kv.get<AppInstall>(keys.install(teamId, appId));

/** Every team's installs of one app, uninstalled ones included. */
export async function listAllInstalls(kv: Store, appId: string): Promise<AppInstall[]> {
  const out: AppInstall[] = [];
  for await (const e of kv.list<AppInstall>({ prefix: keys.installs() })) {
    if (e.value.app_id === appId) out.push(e.value);
  }
  return out;
}

/** A team's installs, uninstalled ones included. */
export async function listTeamInstalls(kv: Store, teamId: string): Promise<AppInstall[]> {
  const out: AppInstall[] = [];
  for await (const e of kv.list<AppInstall>({ prefix: keys.teamInstalls(teamId) })) {
    out.push(e.value);
  }
  return out;
}
