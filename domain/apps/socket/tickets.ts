/**
 * Socket Mode connection URLs (decisions.md, "Apps without a public URL"): `apps.connections.open`
 * answers a URL with a ticket in it, which opens one connection within a minute. `wss://` when
 * BASE_URL is https, else `ws://` (Python's client picks TLS by the scheme and port).
 */
import type { Ctx } from "../../context.ts";
import type { App, AppToken, SocketTicket } from "../../../core/app_records.ts";
import { randomBase62, sha256Hex } from "../../../core/random.ts";
import { keys } from "../../../kv/keys.ts";

/** How long a connection URL opens a connection. */
export const TICKET_MS = 60_000;

/**
 * A connection URL for the app: its ticket stored hashed, single-use. On BASE_URL's host; without
 * BASE_URL, on the host the app called (`reached`), which a service on a laptop is known by.
 */
export async function connectionUrl(
  ctx: Ctx,
  { app, tokenHash, reached }: { app: App; tokenHash: string; reached: string },
): Promise<string> {
  const ticket = randomBase62(40);
  const record: SocketTicket = {
    app_id: app.id,
    token_hash: tokenHash,
    expires_at: Date.now() + TICKET_MS,
  };
  await ctx.kv.set(keys.socketTicket(sha256Hex(ticket)), record, { expireIn: TICKET_MS });
  const base = new URL(ctx.settings.baseUrlSet ? ctx.settings.baseUrl : reached);
  const scheme = base.protocol === "https:" ? "wss:" : "ws:";
  const path = ctx.settings.baseUrlSet ? base.pathname.replace(/\/$/, "") : "";
  return `${scheme}//${base.host}${path}/socket/${ticket}`;
}

/**
 * What a connection URL opens: the app and the app-level token that asked for it, once, within
 * its minute, while the token stands and the app is in Socket Mode; null otherwise.
 */
export async function takeTicket(
  ctx: Ctx,
  ticket: string,
): Promise<{ app: App; token: AppToken } | null> {
  const taken = await takeOnce(ctx, ticket);
  if (!taken) return null;
  const [app, token] = await ctx.kv.getMany<[App, AppToken]>([
    keys.app(taken.app_id),
    keys.appToken(taken.token_hash),
  ]);
  if (!app.value?.socket_mode_enabled || !token.value) return null;
  return { app: app.value, token: token.value };
}

async function takeOnce(ctx: Ctx, ticket: string): Promise<SocketTicket | null> {
  if (!/^[0-9A-Za-z]{40}$/.test(ticket)) return null;
  const key = keys.socketTicket(sha256Hex(ticket));
  const entry = await ctx.kv.get<SocketTicket>(key);
  // expireIn is lazy: the stored time decides.
  if (!entry.value || entry.value.expires_at < Date.now()) return null;
  const taken = await ctx.kv.atomic().check(entry).delete(key).commit();
  return taken.ok ? entry.value : null;
}
