/**
 * App-level tokens (decisions.md, "Apps without a public URL"): an `xapp-` token with
 * `connections:write`, printed once and stored hashed, belonging to the app across its installs.
 * It opens Socket Mode connections (`apps.connections.open`) and does nothing else. The operator's.
 */
import type { Ctx } from "../../context.ts";
import type { App, AppToken } from "../../../core/app_records.ts";
import { notFound } from "../../../core/errors.ts";
import { newId, nowIso } from "../../../core/ids.ts";
import { randomBase62, sha256Hex } from "../../../core/random.ts";
import { getApp } from "../../../kv/apps/apps.ts";
import {
  deleteAppToken,
  getAppToken,
  insertAppToken,
  listAppTokens,
} from "../../../kv/apps/app_tokens.ts";
import { authorize } from "../../policy.ts";
import type { Actor } from "../../principals.ts";

/** What an app-level token starts with, as Slack's do. */
export const APP_TOKEN_PREFIX = "xapp-";

/** An app-level token as listed: never its value. */
export interface AppTokenView {
  id: string;
  app_id: string;
  name: string;
  scopes: ["connections:write"];
  created_at: string;
}

const viewOf = (t: AppToken): AppTokenView => ({ ...t, scopes: ["connections:write"] });

async function appOf(ctx: Ctx, appId: string): Promise<App> {
  const app = (await getApp(ctx.kv, appId)).value;
  if (!app) throw notFound(`No app ${appId}.`);
  return app;
}

/** A new app-level token for the app: its value returned this once. */
export async function createAppToken(
  ctx: Ctx,
  { appId, name, actor }: { appId: string; name: string | null; actor: Actor },
): Promise<AppTokenView & { token: string }> {
  authorize(actor, "app.register", {});
  const app = await appOf(ctx, appId);
  const value = `${APP_TOKEN_PREFIX}1-${randomBase62(48)}`;
  const token: AppToken = {
    id: newId(),
    app_id: app.id,
    name: name?.trim() || "socket mode",
    created_at: nowIso(),
  };
  await insertAppToken(ctx.kv, sha256Hex(value), token);
  return { ...viewOf(token), token: value };
}

export async function listAppLevelTokens(
  ctx: Ctx,
  { appId, actor }: { appId: string; actor: Actor },
): Promise<AppTokenView[]> {
  authorize(actor, "app.register", {});
  await appOf(ctx, appId);
  return (await listAppTokens(ctx.kv, appId)).map((t) => viewOf(t.token));
}

/** Revokes an app-level token; the connections it opened are told `link_disabled` and closed. */
export async function revokeAppToken(
  ctx: Ctx,
  { appId, tokenId, actor }: { appId: string; tokenId: string; actor: Actor },
): Promise<void> {
  authorize(actor, "app.register", {});
  if (!await deleteAppToken(ctx.kv, appId, tokenId)) {
    throw notFound(`No app-level token ${tokenId} of app ${appId}.`);
  }
}

/** The app an app-level token's value belongs to, or null (unknown, revoked, or its app gone). */
export async function appOfAppToken(
  ctx: Ctx,
  value: string,
): Promise<{ app: App; token: AppToken; hash: string } | null> {
  if (!value.startsWith(APP_TOKEN_PREFIX)) return null;
  const hash = sha256Hex(value);
  const token = (await getAppToken(ctx.kv, hash)).value;
  if (!token) return null;
  const app = (await getApp(ctx.kv, token.app_id)).value;
  return app ? { app, token, hash } : null;
}
