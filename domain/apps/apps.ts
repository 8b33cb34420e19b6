import type { Ctx } from "../context.ts";
import { type Scope, SCOPES } from "../../core/types.ts";
import { type App } from "../../core/app_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { newId, nowIso } from "../../core/ids.ts";
import { randomBase62, sha256Hex } from "../../core/random.ts";
import { retrying } from "../../core/retry.ts";
import {
  deleteApp,
  getApp,
  getAppByClientId,
  insertApp,
  listAllApps,
  replaceApp,
} from "../../kv/apps/apps.ts";
import { authorize } from "../policy.ts";
import type { Actor } from "../principals.ts";
import { checkName } from "../text.ts";

export interface NewApp {
  name: string;
  redirectUris: string[];
  scopes: Scope[];
  incomingWebhook: boolean;
}

/** What an app is shown as: everything but its secrets (hashed or sealed). */
export type AppView = Omit<App, "secret_hash" | "signing_secret">;

export const appView = ({ secret_hash: _, signing_secret: __, ...view }: App): AppView => view;

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** https, or http to this machine (for development); no fragment (RFC 6749 §3.1.2). */
export function checkRedirectUri(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid("redirect_uris", `Not a URL: ${text}`);
  }
  const loopback = url.protocol === "http:" && LOOPBACK.has(url.hostname);
  if (url.protocol !== "https:" && !loopback) {
    throw invalid(
      "redirect_uris",
      `A redirect URI must be https (http only for loopback): ${text}`,
    );
  }
  if (url.hash || text.includes("#")) {
    throw invalid("redirect_uris", `A redirect URI can't have a fragment: ${text}`);
  }
  return text;
}

const newSecret = () => `tcs_${randomBase62(40)}`;

/** Registers an app; its client secret is returned this once. The operator's alone. */
export async function createApp(
  ctx: Ctx,
  input: NewApp,
  actor: Actor,
): Promise<{ app: App; clientSecret: string }> {
  authorize(actor, "app.register", {});
  const name = checkName("name", input.name.trim());
  if (input.redirectUris.length === 0) {
    throw invalid("redirect_uris", "Give at least one redirect URI.");
  }
  if (input.scopes.length === 0) throw invalid("scopes", "Give at least one scope.");
  if (!input.scopes.every((s) => SCOPES.includes(s))) throw invalid("scopes", "Unknown scope.");
  const clientSecret = newSecret();
  const app: App = {
    id: newId(),
    name,
    client_id: `app_${randomBase62(24)}`,
    secret_hash: sha256Hex(clientSecret),
    redirect_uris: [...new Set(input.redirectUris.map(checkRedirectUri))],
    scopes: SCOPES.filter((s) => input.scopes.includes(s)),
    incoming_webhook: input.incomingWebhook,
    created_at: nowIso(),
  };
  await insertApp(ctx.kv, app);
  return { app, clientSecret };
}

export async function listApps(ctx: Ctx, actor: Actor): Promise<App[]> {
  authorize(actor, "app.register", {});
  return await listAllApps(ctx.kv);
}

async function appEntry(ctx: Ctx, id: string): Promise<Deno.KvEntry<App>> {
  const entry = await getApp(ctx.kv, id);
  if (!entry.value) throw notFound(`No app ${id}.`);
  return entry as Deno.KvEntry<App>;
}

/** A new client secret; the old one stops working at once. */
export async function rotateAppSecret(ctx: Ctx, id: string, actor: Actor): Promise<string> {
  authorize(actor, "app.register", {});
  return await retrying("rotate app secret", async () => {
    const entry = await appEntry(ctx, id);
    const secret = newSecret();
    const ok = await replaceApp(ctx.kv, entry, { ...entry.value, secret_hash: sha256Hex(secret) });
    return ok ? secret : null;
  });
}

/** Deletes an app: it can't install or get tokens again; what it installed stays until uninstalled. */
export async function removeApp(ctx: Ctx, id: string, actor: Actor): Promise<void> {
  authorize(actor, "app.register", {});
  await retrying("delete app", async () => await deleteApp(ctx.kv, await appEntry(ctx, id)));
}

/** The app a `client_id` names, or null. */
export const appByClientId = (ctx: Ctx, clientId: string) => getAppByClientId(ctx.kv, clientId);

/** The app by id, or null. */
export const appById = async (ctx: Ctx, id: string) => (await getApp(ctx.kv, id)).value;

/**
 * The app `clientId` names when `secret` is its client secret; else the 404 that the guessing
 * guard counts as a miss. Compared by hash: the secret is never stored.
 */
export async function authenticatedApp(ctx: Ctx, clientId: string, secret: string): Promise<App> {
  const app = clientId ? await getAppByClientId(ctx.kv, clientId) : null;
  if (!app || sha256Hex(secret) !== app.secret_hash) throw notFound("Unknown client.");
  return app;
}
