/**
 * OAuth 2.0 for apps (RFC 6749, PKCE per RFC 7636, revocation per RFC 7009): reading an
 * authorization request, turning an admin's approval into a one-time code, and the code into an
 * install. Errors are typed by where they go: a page that never redirects (the client or its
 * redirect_uri can't be trusted), a redirect with `error`, or the token endpoint's JSON.
 */
import type { Ctx } from "./context.ts";
import {
  type App,
  type AuthorizationCode,
  type Scope,
  SCOPES,
  type Subject,
} from "../core/types.ts";
import { ApiError, invalid, notFound, unlessAlreadyDone } from "../core/errors.ts";
import { randomBase62, sha256Hex } from "../core/random.ts";
import {
  claimCode,
  getCode,
  getInstall,
  insertCode,
  markReplayed,
  recordIssued,
} from "../kv/apps.ts";
import { getTokenByHash } from "../kv/tokens.ts";
import { authorize } from "./policy.ts";
import { visibleChannels } from "./channel_access.ts";
import { appByClientId } from "./apps.ts";
import { installApp, uninstallApp } from "./app_installs.ts";
import { revokeTokenById } from "./tokens.ts";
import { revokeIncomingById } from "./incoming.ts";

/** A code works for 10 minutes, once. */
export const CODE_TTL_MS = 10 * 60_000;
/** It is kept a day longer, so that presenting it again is recognised and answered. */
const CODE_KEEP_MS = CODE_TTL_MS + 24 * 60 * 60_000;

/** The token and revocation endpoints' error: RFC 6749 §5.2 JSON. */
export class OAuthError extends Error {
  constructor(readonly error: string, description: string, readonly status: 400 | 401 = 400) {
    super(description);
  }
}

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
/** RFC 7636 §4.1. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

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

export interface FoundCode {
  hash: string;
  entry: Deno.KvEntry<AuthorizationCode>;
}

/** The code `value` names, or the 404 the guessing guard counts as a miss. */
export async function findCode(ctx: Ctx, value: string): Promise<FoundCode> {
  const hash = sha256Hex(value);
  const entry = await getCode(ctx.kv, hash);
  if (!entry.value) throw notFound("Unknown code.");
  return { hash, entry: entry as Deno.KvEntry<AuthorizationCode> };
}

/** Revokes what a code issued, when it turns out to have been presented twice. */
async function takeBack(ctx: Ctx, issued: AuthorizationCode["issued"]) {
  if (!issued) return;
  await revokeTokenById(ctx, issued.token_id, null).catch(unlessAlreadyDone);
  if (issued.incoming_webhook_id) {
    await revokeIncomingById(ctx, issued.incoming_webhook_id, null).catch(unlessAlreadyDone);
  }
}

async function s256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return new Uint8Array(digest).toBase64({ alphabet: "base64url", omitPadding: true });
}

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  scope: string;
  app_id: string;
  bot_user_id: string;
  team: { id: string; name: string };
  incoming_webhook?: { channel_id: string; url: string };
}

const replayed = () =>
  new OAuthError("invalid_grant", "The code was used already; what it gave is revoked.");

/** Checks a code against the request that redeems it, before it is used up. */
async function checkCode(
  app: App,
  code: AuthorizationCode,
  params: { redirect_uri?: string; code_verifier?: string },
) {
  if (code.app_id !== app.id) throw new OAuthError("invalid_grant", "The code is another app's.");
  if (Date.parse(code.expires_at) <= Date.now()) {
    throw new OAuthError("invalid_grant", "The code expired: codes work for 10 minutes.");
  }
  if (params.redirect_uri !== undefined && params.redirect_uri !== code.redirect_uri) {
    throw new OAuthError("invalid_grant", "The redirect_uri is not the authorization's.");
  }
  if (!VERIFIER.test(params.code_verifier ?? "")) {
    throw new OAuthError("invalid_request", "code_verifier is required (PKCE, RFC 7636).");
  }
  if (await s256(params.code_verifier!) !== code.code_challenge) {
    throw new OAuthError("invalid_grant", "The code_verifier does not match the code_challenge.");
  }
}

/**
 * Redeems a code: once, within its 10 minutes, by the app it was made for, with the PKCE
 * verifier. A code presented again gets `invalid_grant` and revokes what its first use issued.
 */
export async function redeemCode(
  ctx: Ctx,
  app: App,
  found: FoundCode,
  params: { redirect_uri?: string; code_verifier?: string },
): Promise<TokenResponse> {
  const code = found.entry.value;
  const usedAt = new Date().toISOString();
  if (code.used_at || !(await claimCode(ctx.kv, found.entry, usedAt, CODE_KEEP_MS))) {
    await takeBack(ctx, await markReplayed(ctx.kv, found.hash, usedAt, CODE_KEEP_MS));
    throw replayed();
  }
  await checkCode(app, code, params);
  const installed = await installApp(ctx, app, code).catch((e) => {
    if (e instanceof ApiError && e.status < 500) throw new OAuthError("invalid_grant", e.message);
    throw e;
  });
  const issued = {
    token_id: installed.token.token.id,
    incoming_webhook_id: installed.incoming?.id ?? null,
  };
  if (!(await recordIssued(ctx.kv, found.hash, issued, CODE_KEEP_MS))) {
    await takeBack(ctx, issued);
    throw replayed();
  }
  return {
    access_token: installed.token.value,
    token_type: "Bearer",
    scope: installed.install.scopes.join(" "),
    app_id: app.id,
    bot_user_id: installed.install.bot_user_id,
    team: { id: installed.team.id, name: installed.team.name },
    ...installed.incoming
      ? {
        incoming_webhook: {
          channel_id: installed.incoming.channel_id,
          url: installed.incoming.url,
        },
      }
      : {},
  };
}

/**
 * POST /oauth/revoke (RFC 7009): the app gives back a token of its install, which uninstalls it
 * from that team. A token that isn't live or isn't the app's changes nothing, and is answered
 * alike.
 */
export async function revokeByApp(ctx: Ctx, app: App, value: string): Promise<void> {
  const token = value ? await getTokenByHash(ctx.kv, sha256Hex(value)) : null;
  if (!token || token.revoked_at) return;
  const install = (await getInstall(ctx.kv, token.team_id, app.id)).value;
  if (!install || install.bot_user_id !== token.user_id) return;
  await uninstallApp(ctx, { teamId: token.team_id, appId: app.id, actor: null });
}
