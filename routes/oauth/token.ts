import { type Context, Hono } from "hono";
import type { Ctx } from "../../domain/context.ts";
import { ApiError } from "../../core/errors.ts";
import { SCOPES } from "../../core/types.ts";
import type { GuessGuard } from "../../domain/guards/guessing.ts";
import { authenticatedApp } from "../../domain/apps/apps.ts";
import { findCode, OAuthError, redeemCode, revokeByApp } from "../../domain/apps/oauth.ts";
import { clientAddress } from "../client_address.ts";

const NO_STORE = { "Cache-Control": "no-store", "Pragma": "no-cache" };

/** RFC 6749 §5.2: `{ error, error_description }`, never cached. */
function oauthError(c: Context, e: OAuthError) {
  if (e.status === 401) c.header("WWW-Authenticate", 'Basic realm="oauth"');
  return c.json({ error: e.error, error_description: e.message }, e.status, NO_STORE);
}

type Form = Record<string, string>;

async function formOf(c: Context): Promise<Form> {
  if (!(c.req.header("Content-Type") ?? "").startsWith("application/x-www-form-urlencoded")) {
    throw new OAuthError("invalid_request", "Send the parameters form-encoded (RFC 6749 §4.1.3).");
  }
  const body = await c.req.parseBody();
  return Object.fromEntries(
    Object.entries(body).flatMap(([k, v]) => typeof v === "string" ? [[k, v]] : []),
  );
}

/** `id:secret` of an HTTP Basic header, each part form-encoded (RFC 6749 §2.3.1), or null. */
function basicCredentials(header: string): { id: string; secret: string } | null {
  try {
    const decoded = atob(header.slice("Basic ".length).trim());
    const colon = decoded.indexOf(":");
    if (colon <= 0) return null;
    const part = (s: string) => decodeURIComponent(s.replaceAll("+", " "));
    return { id: part(decoded.slice(0, colon)), secret: part(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

/** The client's credentials: HTTP Basic, or both in the body; one way, not two. */
function credentialsOf(c: Context, form: Form): { id: string; secret: string } {
  const header = c.req.header("Authorization");
  if (header?.startsWith("Basic ") && form.client_secret !== undefined) {
    throw new OAuthError("invalid_request", "Authenticate the client one way, not two.");
  }
  const found = header?.startsWith("Basic ")
    ? basicCredentials(header)
    : form.client_id && form.client_secret
    ? { id: form.client_id, secret: form.client_secret }
    : null;
  if (!found) throw new OAuthError("invalid_client", "The client must authenticate.", 401);
  return found;
}

/**
 * The token and revocation endpoints, and the metadata that names them. Unknown client secrets
 * and codes count against the client's address, as secret URLs do.
 */
export function tokenRoutes(ctx: Ctx, guard: GuessGuard) {
  const guarded = <T>(
    c: Context,
    surface: "client_secret" | "oauth_code",
    lookup: () => Promise<T>,
    miss: OAuthError,
  ) =>
    guard.lookup(clientAddress(c, ctx.settings.trustProxy), surface, lookup).catch((e) => {
      if (e instanceof ApiError && e.status === 404) throw miss;
      throw e;
    });

  const client = (c: Context, form: Form) => {
    const { id, secret } = credentialsOf(c, form);
    return guarded(
      c,
      "client_secret",
      () => authenticatedApp(ctx, id, secret),
      new OAuthError("invalid_client", "Unknown client, or a wrong client secret.", 401),
    );
  };

  const app = new Hono();
  app.onError((e, c) => {
    if (e instanceof OAuthError) return oauthError(c, e);
    if (e instanceof ApiError && e.status === 429) {
      return c.json(
        { error: "slow_down", error_description: e.message },
        429,
        { ...NO_STORE, ...e.headers },
      );
    }
    throw e;
  });
  app.post("/token", async (c) => {
    const form = await formOf(c);
    const found = await client(c, form);
    if (form.grant_type !== "authorization_code") {
      throw new OAuthError(
        "unsupported_grant_type",
        "Only grant_type=authorization_code is supported.",
      );
    }
    if (!form.code) throw new OAuthError("invalid_request", "code is required.");
    const code = await guarded(
      c,
      "oauth_code",
      () => findCode(ctx, form.code),
      new OAuthError("invalid_grant", "Unknown or expired code."),
    );
    const answer = await redeemCode(ctx, found, code, {
      redirect_uri: form.redirect_uri,
      code_verifier: form.code_verifier,
    });
    return c.json(answer, 200, NO_STORE);
  });
  app.post("/revoke", async (c) => {
    const form = await formOf(c);
    const found = await client(c, form);
    if (!form.token) throw new OAuthError("invalid_request", "token is required (RFC 7009).");
    await revokeByApp(ctx, found, form.token);
    return c.body(null, 200, NO_STORE);
  });
  return app;
}

/** GET /.well-known/oauth-authorization-server (RFC 8414). */
export const metadataHandler = (ctx: Ctx) => (c: Context) => {
  const base = ctx.settings.baseUrl;
  return c.json({
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    revocation_endpoint: `${base}/oauth/revoke`,
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    scopes_supported: SCOPES,
    service_documentation: `${base}/api/v1/docs`,
  });
};
