/**
 * What the OAuth tests share: an app registered as the operator would, a PKCE pair, and the
 * consent page driven over HTTP with a signed-in person's cookie, as a browser would send it.
 */
import assert from "node:assert/strict";
import type { Ctx } from "../domain/context.ts";
import { createApp } from "../domain/apps/apps.ts";
import type { Scope } from "../core/types.ts";
import type { App } from "../core/app_records.ts";
import { signedInCookie, type TestServer } from "./harness.ts";

export const CALLBACK = "http://127.0.0.1:9/callback";

export async function registerApp(
  ctx: Ctx,
  opts: { scopes?: Scope[]; incomingWebhook?: boolean; redirectUris?: string[] } = {},
): Promise<{ app: App; secret: string }> {
  const { app, clientSecret } = await createApp(ctx, {
    name: "Deploy Tracker",
    redirectUris: opts.redirectUris ?? [CALLBACK],
    scopes: opts.scopes ?? ["channels:read", "messages:write"],
    incomingWebhook: opts.incomingWebhook ?? false,
  }, null);
  return { app, secret: clientSecret };
}

export async function pkce() {
  const verifier = crypto.getRandomValues(new Uint8Array(48)).toBase64({
    alphabet: "base64url",
    omitPadding: true,
  });
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  const challenge = new Uint8Array(digest).toBase64({ alphabet: "base64url", omitPadding: true });
  return { verifier, challenge };
}

/** An authorization request's query, as a well-behaved client makes it. */
export function authorizeQuery(
  app: App,
  challenge: string,
  overrides: Record<string, string | null> = {},
): string {
  const params: Record<string, string | null> = {
    response_type: "code",
    client_id: app.client_id,
    redirect_uri: app.redirect_uris[0],
    scope: app.scopes.join(" "),
    state: "st-123",
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...overrides,
  };
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null) query.set(k, v);
  return query.toString();
}

const ENTITIES: Record<string, string> = {
  "&amp;": "&",
  "&quot;": '"',
  "&lt;": "<",
  "&gt;": ">",
  "&#39;": "'",
};
const unescape = (s: string) => s.replace(/&(amp|quot|lt|gt|#39);/g, (m) => ENTITIES[m]);

/** The hidden fields of the consent form: the request's parameters and the CSRF token. */
export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    out[m[1]] = unescape(m[2]);
  }
  return out;
}

export async function get(s: TestServer, path: string, cookie?: string) {
  const res = await fetch(`${s.url}${path}`, {
    redirect: "manual",
    headers: cookie ? { Cookie: cookie } : {},
  });
  return { res, text: await res.text() };
}

/** Opens the consent page as `userId` and answers it; the response, not followed. */
export async function answerConsent(
  s: TestServer,
  opts: { userId: string; query: string; decision?: string; form?: Record<string, string> },
) {
  const cookie = await signedInCookie(s.url, s.ctx, opts.userId);
  const page = await get(s, `/oauth/authorize?${opts.query}`, cookie);
  assert.equal(page.res.status, 200, page.text);
  const res = await fetch(`${s.url}/oauth/authorize`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: cookie, Origin: s.url, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      ...hiddenFields(page.text),
      decision: opts.decision ?? "approve",
      ...opts.form,
    }),
  });
  return { res, text: await res.text(), page: page.text };
}

/** The approval's code, read off the redirect to the app. */
export async function approvedCode(
  s: TestServer,
  opts: { userId: string; query: string; form?: Record<string, string> },
): Promise<string> {
  const { res, text } = await answerConsent(s, opts);
  assert.equal(res.status, 303, text);
  const to = new URL(res.headers.get("Location")!);
  assert.equal(to.searchParams.get("state"), "st-123");
  return to.searchParams.get("code")!;
}

/** POST /oauth/token with HTTP Basic client authentication. */
export async function tokenRequest(
  s: TestServer,
  opts: { app: App; secret: string; form: Record<string, string> },
) {
  const res = await fetch(`${s.url}/oauth/token`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${btoa(`${opts.app.client_id}:${opts.secret}`)}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams(opts.form),
  });
  return { res, body: await res.json() };
}
