/**
 * Reading an app's authorization request (RFC 6749 §4.1.1, PKCE per RFC 7636) and turning an
 * admin's answer into a one-time code or a refusal. Errors are typed by where they go: a page
 * that never redirects (the client or its redirect_uri can't be trusted), or a redirect with
 * `error`.
 */
import type { Ctx } from "../context.ts";
import { type Scope, SCOPES, type Subject } from "../../core/types.ts";
import { type App } from "../../core/app_records.ts";
import { invalid } from "../../core/errors.ts";
import { randomBase62, sha256Hex } from "../../core/random.ts";
import { insertCode } from "../../kv/apps/apps.ts";
import { authorize } from "../policy.ts";
import { visibleChannels } from "../channels/access.ts";
import { appByClientId } from "./apps.ts";
import { CODE_KEEP_MS, CODE_TTL_MS } from "./oauth.ts";

/** An authorization request that can't be sent back: an unknown client or redirect_uri. */
export class AuthorizePageError extends Error {}

/** An authorization request refused back to the client's redirect_uri (RFC 6749 §4.1.2.1). */
export class AuthorizeRedirectError extends Error {
  constructor(readonly to: string, readonly error: string, description: string) {
    super(description);
  }
}

export interface AuthorizeRequest {
  app: App;
  redirectUri: string;
  scopes: Scope[];
  state: string | null;
  codeChallenge: string;
}

/** `redirectUri` with `params` added to its query (nulls left out). */
export function redirectWith(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null) url.searchParams.set(name, value);
  }
  return url.href;
}

/** base64url of SHA-256, no padding: 43 characters. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** The scopes asked for (space-separated, RFC 6749 §3.3); none asked means all registered. */
function askedScopes(app: App, scope: string | undefined): Scope[] | null {
  const asked = (scope ?? "").split(/[\s,]+/).filter(Boolean);
  if (asked.length === 0) return app.scopes;
  if (!asked.every((s) => (app.scopes as string[]).includes(s))) return null;
  return SCOPES.filter((s) => asked.includes(s));
}

/**
 * Checks an authorization request's parameters: the client and redirect_uri first (their errors
 * are shown, never redirected), then the rest (sent back to the client with `error`).
 */
export async function readAuthorizeRequest(
  ctx: Ctx,
  params: Record<string, string | undefined>,
): Promise<AuthorizeRequest> {
  const app = params.client_id ? await appByClientId(ctx, params.client_id) : null;
  if (!app) throw new AuthorizePageError("This link names no app registered here (client_id).");
  const redirectUri = params.redirect_uri ??
    (app.redirect_uris.length === 1 ? app.redirect_uris[0] : "");
  if (!app.redirect_uris.includes(redirectUri)) {
    throw new AuthorizePageError(`The redirect_uri is not one ${app.name} registered.`);
  }
  const state = params.state ?? null;
  const refuse = (error: string, description: string) =>
    new AuthorizeRedirectError(
      redirectWith(redirectUri, { error, error_description: description, state }),
      error,
      description,
    );
  if (params.response_type !== "code") {
    throw refuse("unsupported_response_type", "Only response_type=code is supported.");
  }
  if (params.code_challenge_method !== "S256" || !CHALLENGE.test(params.code_challenge ?? "")) {
    throw refuse("invalid_request", "PKCE is required: code_challenge with method S256.");
  }
  const scopes = askedScopes(app, params.scope);
  if (!scopes) {
    throw refuse("invalid_scope", `A scope asked for is not one ${app.name} registered.`);
  }
  return { app, redirectUri, scopes, state, codeChallenge: params.code_challenge! };
}

/** The channel an app's incoming webhook may post into: one the admin sees, open, not direct. */
async function hookChannel(ctx: Ctx, actor: Subject, channelId: string | null) {
  const [channel] = channelId ? await visibleChannels(ctx, actor, [channelId]) : [];
  if (!channel || channel.is_direct || channel.is_archived) {
    throw invalid("channel", "Choose a channel for the app's incoming webhook.");
  }
  return channel.id;
}

/**
 * The admin approved: a one-time code for the app, and where to send the browser with it. An
 * app that asked for an incoming webhook needs the channel it posts into.
 */
export async function approveInstall(
  ctx: Ctx,
  actor: Subject,
  request: AuthorizeRequest,
  channelId: string | null,
): Promise<string> {
  authorize(actor, "app.install", { team_id: actor.team_id });
  const channel = request.app.incoming_webhook ? await hookChannel(ctx, actor, channelId) : null;
  const value = randomBase62(43);
  await insertCode(ctx.kv, sha256Hex(value), {
    app_id: request.app.id,
    team_id: actor.team_id,
    user_id: actor.user_id,
    redirect_uri: request.redirectUri,
    scopes: request.scopes,
    code_challenge: request.codeChallenge,
    channel_id: channel,
    expires_at: new Date(Date.now() + CODE_TTL_MS).toISOString(),
    used_at: null,
    issued: null,
    replayed_at: null,
  }, CODE_KEEP_MS);
  return redirectWith(request.redirectUri, { code: value, state: request.state });
}

/** The admin said no. */
export const denyInstall = (request: AuthorizeRequest) =>
  redirectWith(request.redirectUri, {
    error: "access_denied",
    error_description: "The admin did not approve the install.",
    state: request.state,
  });
