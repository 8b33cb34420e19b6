/**
 * OAuth 2.0 for apps, past the consent page: the code an admin's approval made turned into an
 * install (RFC 6749 §4.1.3, PKCE per RFC 7636), and an app giving its token back (RFC 7009).
 * Errors here are the token endpoint's JSON.
 */
import type { Ctx } from "../context.ts";
import type { App, AuthorizationCode } from "../../core/app_records.ts";
import { ApiError, notFound, unlessAlreadyDone } from "../../core/errors.ts";
import { sha256Hex } from "../../core/random.ts";
import { nowIso } from "../../core/ids.ts";
import { retrying } from "../../core/retry.ts";
import { CODE_KEPT_MS, getCode, getInstall, rewriteCode, spendCode } from "../../kv/apps/apps.ts";
import { getTokenByHash } from "../../kv/tokens.ts";
import { type Approval, installApp, type Installed, uninstallApp } from "./installs.ts";
import { revokeTokenById } from "../people/tokens.ts";
import { revokeIncomingById } from "../webhooks/incoming.ts";

/** A code works for 10 minutes, once. */
export const CODE_TTL_MS = 10 * 60_000;
/** It is kept a day longer, so that presenting it again is recognised and answered. */
export const CODE_KEEP_MS = CODE_TTL_MS + CODE_KEPT_MS;

/** The token and revocation endpoints' error: RFC 6749 §5.2 JSON. */
export class OAuthError extends Error {
  constructor(readonly error: string, description: string, readonly status: 400 | 401 = 400) {
    super(description);
  }
}

/** RFC 7636 §4.1. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

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

/** The code's entry as it is now, when there still is one. */
async function currentCode(ctx: Ctx, hash: string) {
  const entry = await getCode(ctx.kv, hash);
  return entry.value ? entry as Deno.KvEntry<AuthorizationCode> : null;
}

/** Marks a used code as presented again: what it issued (written with its use). */
const markReplayed = (ctx: Ctx, hash: string) =>
  retrying("mark a code replayed", async () => {
    const entry = await currentCode(ctx, hash);
    if (!entry) return { issued: null };
    const next = { ...entry.value, replayed_at: nowIso() };
    return await rewriteCode(ctx.kv, entry, next, CODE_KEEP_MS) ? entry.value : null;
  });

/** Its own client presented a used code again: what the first use issued is revoked. */
async function replay(ctx: Ctx, hash: string): Promise<never> {
  await takeBack(ctx, (await markReplayed(ctx, hash)).issued);
  throw new OAuthError("invalid_grant", "The code was used already; what it gave is revoked.");
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

/** Checks a code against the request that redeems it, before it is used up. */
async function checkCode(
  code: AuthorizationCode,
  params: { redirect_uri?: string; code_verifier?: string },
) {
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
 * Spends a code in its install's commit, as it is then: a code its own client used meanwhile is
 * a replay.
 */
const spender = (ctx: Ctx, hash: string): Approval["spend"] => async (plan, issued) => {
  const entry = await currentCode(ctx, hash);
  if (!entry) throw new OAuthError("invalid_grant", "Unknown or expired code.");
  if (entry.value.used_at) await replay(ctx, hash);
  const next = { ...entry.value, used_at: nowIso(), issued };
  spendCode(plan, { entry, next, keepMs: CODE_KEEP_MS });
};

/**
 * Redeems a code: once, within its 10 minutes, by the app it was made for, with the PKCE
 * verifier. A code is its client's: another client's attempt, or a failed redirect_uri or PKCE
 * check, is refused and leaves the code as it was. Its own client presenting it again gets
 * `invalid_grant` and revokes what its first use issued. The install and the code's use are one
 * commit: both land, or neither.
 */
export async function redeemCode(
  ctx: Ctx,
  app: App,
  found: FoundCode,
  params: { redirect_uri?: string; code_verifier?: string },
): Promise<TokenResponse> {
  const code = found.entry.value;
  if (code.app_id !== app.id) throw new OAuthError("invalid_grant", "The code is another app's.");
  if (code.used_at) await replay(ctx, found.hash);
  await checkCode(code, params);
  const installed = await installApp(ctx, {
    app,
    teamId: code.team_id,
    scopes: code.scopes,
    channelId: code.channel_id,
    approvedBy: code.user_id,
    spend: spender(ctx, found.hash),
  }).catch((e) => {
    if (e instanceof ApiError && e.status < 500) throw new OAuthError("invalid_grant", e.message);
    throw e;
  });
  return tokenResponse(app, installed);
}

/** What the token endpoint answers for an install (and `app:install` prints). */
export const tokenResponse = (app: App, installed: Installed): TokenResponse => ({
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
});

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
