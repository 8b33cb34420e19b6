/**
 * Apps installing themselves with OAuth 2.0 (decisions.md "Apps"): the refusals first, then what
 * an install gives and what uninstalling takes back.
 */
import assert from "node:assert/strict";
import {
  api,
  clearOfWindowEdge,
  signedInCookie,
  startServer,
  type TestServer,
  type Workspace,
  workspace,
} from "./harness.ts";
import {
  answerConsent,
  approvedCode,
  authorizeQuery,
  get,
  pkce,
  registerApp,
  tokenRequest,
} from "./oauth_client.ts";
import { listAudit } from "../kv/audit.ts";
import { keys } from "../kv/keys.ts";
import type { AuthorizationCode } from "../core/app_records.ts";
import { sha256Hex } from "../core/random.ts";
import { userById } from "../domain/people/workspace.ts";
import { createLoginLink } from "../domain/people/sessions.ts";

async function withApp(
  fn: (s: TestServer, w: Workspace, reg: Awaited<ReturnType<typeof registerApp>>) => Promise<void>,
  opts: Parameters<typeof registerApp>[1] = {},
) {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    await fn(s, w, await registerApp(s.ctx, opts));
  } finally {
    await s.close();
  }
}

/** The whole happy path up to the token: approve as the admin, redeem with the verifier. */
async function install(s: TestServer, w: Workspace, reg: Awaited<ReturnType<typeof registerApp>>) {
  const { verifier, challenge } = await pkce();
  const code = await approvedCode(s, {
    userId: w.admin.user.id,
    query: authorizeQuery(reg.app, challenge),
  });
  const { res, body } = await tokenRequest(s, {
    ...reg,
    form: {
      grant_type: "authorization_code",
      code,
      redirect_uri: reg.app.redirect_uris[0],
      code_verifier: verifier,
    },
  });
  assert.equal(res.status, 200, JSON.stringify(body));
  return { code, verifier, body };
}

Deno.test("oauth: a client or redirect_uri that can't be trusted gets a page, never a redirect", async () => {
  await withApp(async (s, _w, { app }) => {
    const { challenge } = await pkce();
    for (
      const query of [
        authorizeQuery(app, challenge, { client_id: "app_nobody" }),
        authorizeQuery(app, challenge, { redirect_uri: "https://evil.example/callback" }),
        authorizeQuery(app, challenge, { redirect_uri: `${app.redirect_uris[0]}/more` }),
      ]
    ) {
      const { res, text } = await get(s, `/oauth/authorize?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.headers.get("Location"), null);
      assert.match(text, /install this app/);
    }
  });
});

Deno.test("oauth: other bad requests go back to the app with RFC 6749's error codes", async () => {
  await withApp(async (s, _w, { app }) => {
    const { challenge } = await pkce();
    const cases: [Record<string, string | null>, string][] = [
      [{ code_challenge_method: null }, "invalid_request"],
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ code_challenge: null }, "invalid_request"],
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ scope: "channels:read webhooks:write" }, "invalid_scope"],
    ];
    for (const [overrides, error] of cases) {
      const { res } = await get(s, `/oauth/authorize?${authorizeQuery(app, challenge, overrides)}`);
      assert.equal(res.status, 302, JSON.stringify(overrides));
      const to = new URL(res.headers.get("Location")!);
      assert.equal(`${to.origin}${to.pathname}`, app.redirect_uris[0]);
      assert.equal(to.searchParams.get("error"), error, JSON.stringify(overrides));
      assert.equal(to.searchParams.get("state"), "st-123");
    }
  });
});

Deno.test("oauth: not signed in, the page says how and brings the person back; a member can't install", async () => {
  await withApp(async (s, w, { app }) => {
    const { challenge } = await pkce();
    const query = authorizeQuery(app, challenge);
    const anonymous = await get(s, `/oauth/authorize?${query}`);
    assert.equal(anonymous.res.status, 401);
    assert.match(anonymous.text, /login-link/);
    const returnTo = (anonymous.res.headers.get("set-cookie") ?? "").split(";")[0];
    assert.match(returnTo, /^tc_return_to=/);
    const { url } = await createLoginLink(s.ctx, w.admin.user.id);
    const signIn = await fetch(`${s.url}${new URL(url).pathname}`, {
      method: "POST",
      redirect: "manual",
      headers: { Origin: s.url, Cookie: returnTo },
    });
    await signIn.body?.cancel();
    assert.equal(
      signIn.headers.get("Location"),
      `/oauth/authorize?${query}`,
      "back to the request",
    );

    const cookie = await signedInCookie(s.url, s.ctx, w.member.user.id);
    const member = await get(s, `/oauth/authorize?${query}`, cookie);
    assert.equal(member.res.status, 403);
    assert.match(member.text, /Only a team admin or owner can install an app/);
    assert.ok(
      !member.text.includes("/settings/integrations/bots"),
      "a member's nav has no admin parts",
    );
  });
});

Deno.test("oauth: deny goes back with access_denied; nothing is installed", async () => {
  await withApp(async (s, w, { app }) => {
    const { challenge } = await pkce();
    const { res } = await answerConsent(s, {
      userId: w.admin.user.id,
      query: authorizeQuery(app, challenge),
      decision: "deny",
    });
    assert.equal(res.status, 303);
    const to = new URL(res.headers.get("Location")!);
    assert.equal(to.searchParams.get("error"), "access_denied");
    assert.equal(to.searchParams.get("code"), null);
  });
});

Deno.test("oauth: the token endpoint refuses a wrong secret, a wrong verifier, an expired and a replayed code", async () => {
  await withApp(async (s, w, reg) => {
    const { verifier, challenge } = await pkce();
    const query = authorizeQuery(reg.app, challenge);
    const redeem = (code: string, extra: Record<string, string> = {}, secret = reg.secret) =>
      tokenRequest(s, {
        app: reg.app,
        secret,
        form: { grant_type: "authorization_code", code, code_verifier: verifier, ...extra },
      });

    const wrongSecret = await redeem("x", {}, "tcs_wrong");
    assert.equal(wrongSecret.res.status, 401);
    assert.equal(wrongSecret.body.error, "invalid_client");
    assert.equal(wrongSecret.res.headers.get("Cache-Control"), "no-store");

    const unknown = await redeem("not-a-code");
    assert.deepEqual([unknown.res.status, unknown.body.error], [400, "invalid_grant"]);

    const badVerifier = await redeem(await approvedCode(s, { userId: w.admin.user.id, query }), {
      code_verifier: "a".repeat(43),
    });
    assert.deepEqual([badVerifier.res.status, badVerifier.body.error], [400, "invalid_grant"]);

    const stale = await approvedCode(s, { userId: w.admin.user.id, query });
    const key = keys.oauthCode(sha256Hex(stale));
    const entry = await s.ctx.kv.get<AuthorizationCode>(key);
    await s.ctx.kv.set(key, {
      ...entry.value!,
      expires_at: new Date(Date.now() - 1).toISOString(),
    });
    const expired = await redeem(stale);
    assert.equal(expired.body.error, "invalid_grant");
    assert.match(expired.body.error_description, /expired/);

    const both = await fetch(`${s.url}/oauth/token`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${btoa(`${reg.app.client_id}:${reg.secret}`)}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ client_id: reg.app.client_id, client_secret: reg.secret }),
    });
    assert.equal(
      (await both.json()).error,
      "invalid_request",
      "one way of authenticating, not two",
    );

    // The client's credentials in the form work as HTTP Basic does.
    const inForm = await fetch(`${s.url}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        client_id: reg.app.client_id,
        client_secret: reg.secret,
        grant_type: "authorization_code",
        code: await approvedCode(s, { userId: w.admin.user.id, query }),
        code_verifier: verifier,
      }),
    });
    assert.equal(inForm.status, 200, await inForm.clone().text());
    assert.match((await inForm.json()).access_token, /^tcb_/);

    const code = await approvedCode(s, { userId: w.admin.user.id, query });
    const first = await redeem(code);
    assert.equal(first.res.status, 200, JSON.stringify(first.body));
    const token = first.body.access_token;
    assert.equal((await api(s, "GET", "/channels", { token })).status, 200);
    const again = await redeem(code);
    assert.deepEqual([again.res.status, again.body.error], [400, "invalid_grant"]);
    assert.equal(
      (await api(s, "GET", "/channels", { token })).status,
      401,
      "what it gave is revoked",
    );
  });
});

Deno.test("oauth: an install gives a bot with exactly the granted scopes; a reinstall reuses it", async () => {
  await withApp(async (s, w, reg) => {
    const first = await install(s, w, reg);
    assert.equal(first.body.token_type, "Bearer");
    assert.equal(first.body.scope, "channels:read messages:write");
    assert.deepEqual(first.body.team, { id: w.team.id, name: w.team.name });
    const token = first.body.access_token;
    assert.match(token, /^tcb_/);
    assert.equal((await api(s, "GET", "/channels", { token })).status, 200);
    assert.equal((await api(s, "GET", "/webhooks", { token })).status, 403, "not granted");
    const bot = await userById(s.ctx, first.body.bot_user_id);
    assert.deepEqual([bot?.type, bot?.name], ["bot", "Deploy Tracker"]);

    const second = await install(s, w, reg);
    assert.equal(second.body.bot_user_id, first.body.bot_user_id, "the same bot");
    assert.equal((await api(s, "GET", "/channels", { token })).status, 401, "the old token");
    assert.equal(
      (await api(s, "GET", "/channels", { token: second.body.access_token })).status,
      200,
    );
    const actions = (await listAudit(s.ctx.kv, w.team.id, 20)).map((e) => e.action);
    assert.equal(actions.filter((a) => a === "app.installed").length, 2);
  });
});

Deno.test("oauth: an app that asks for an incoming webhook gets one in the channel the admin picks", async () => {
  await withApp(async (s, w, reg) => {
    const { verifier, challenge } = await pkce();
    const query = authorizeQuery(reg.app, challenge);
    const none = await answerConsent(s, { userId: w.admin.user.id, query, form: { channel: "" } });
    assert.equal(none.res.status, 422);
    assert.match(none.text, /Choose a channel/);
    const general = w.team.general_channel_id;
    const code = await approvedCode(s, {
      userId: w.admin.user.id,
      query,
      form: { channel: general },
    });
    const { body } = await tokenRequest(s, {
      ...reg,
      form: { grant_type: "authorization_code", code, code_verifier: verifier },
    });
    assert.equal(body.incoming_webhook.channel_id, general);
    const posted = await fetch(body.incoming_webhook.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ text: "deployed" }),
    });
    assert.equal(posted.status, 201);
    assert.equal((await posted.json()).data.author.id, body.bot_user_id);
  }, { incomingWebhook: true });
});

Deno.test("oauth: the app's own revoke uninstalls it: token, bot and incoming webhook", async () => {
  await withApp(async (s, w, reg) => {
    const { body } = await install(s, w, reg);
    const token = body.access_token;
    const revoke = (form: Record<string, string>, secret = reg.secret) =>
      fetch(`${s.url}/oauth/revoke`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ client_id: reg.app.client_id, client_secret: secret, ...form }),
      });
    const wrong = await revoke({ token }, "tcs_wrong");
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    assert.equal((await api(s, "GET", "/channels", { token })).status, 200, "still installed");

    const done = await revoke({ token });
    assert.equal(done.status, 200);
    await done.body?.cancel();
    assert.equal((await api(s, "GET", "/channels", { token })).status, 401);
    assert.ok((await userById(s.ctx, body.bot_user_id))?.deactivated_at, "its bot is deactivated");
    const actions = (await listAudit(s.ctx.kv, w.team.id, 5)).map((e) => e.action);
    assert.ok(actions.includes("app.uninstalled"));

    const unknown = await revoke({ token: "tcb_not_a_token" });
    assert.equal(unknown.status, 200, "RFC 7009: an unknown token is answered alike");
    await unknown.body?.cancel();
  });
});

Deno.test("oauth: the metadata names the endpoints; everything is gone with the platform off", async () => {
  const s = await startServer();
  try {
    const res = await fetch(`${s.url}/.well-known/oauth-authorization-server`);
    const meta = await res.json();
    assert.equal(meta.issuer, s.ctx.settings.baseUrl);
    assert.equal(meta.token_endpoint, `${s.ctx.settings.baseUrl}/oauth/token`);
    assert.deepEqual(meta.code_challenge_methods_supported, ["S256"]);
  } finally {
    await s.close();
  }
  const off = await startServer({ INTEGRATIONS_ENABLED: "false" });
  try {
    for (const path of ["/.well-known/oauth-authorization-server", "/oauth/authorize"]) {
      const res = await fetch(`${off.url}${path}`);
      await res.body?.cancel();
      assert.equal(res.status, 404, path);
    }
  } finally {
    await off.close();
  }
});

Deno.test("oauth: an admin sees the installed app on the Apps page and uninstalls it there", async () => {
  await withApp(async (s, w, reg) => {
    const { body } = await install(s, w, reg);
    const cookie = await signedInCookie(s.url, s.ctx, w.admin.user.id);
    const listed = await get(s, "/settings/integrations/apps", cookie);
    assert.equal(listed.res.status, 200);
    assert.match(listed.text, /Deploy Tracker/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(listed.text)![1];
    const res = await fetch(`${s.url}/settings/integrations/apps/${reg.app.id}/uninstall`, {
      method: "POST",
      redirect: "manual",
      headers: {
        Cookie: cookie,
        Origin: s.url,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ _csrf: csrf }),
    });
    await res.body?.cancel();
    assert.equal(res.status, 303);
    assert.equal((await api(s, "GET", "/channels", { token: body.access_token })).status, 401);
    const after = await get(s, "/settings/integrations/apps", cookie);
    assert.match(after.text, /No app is installed/);
  });
});

Deno.test("oauth: guessing client secrets is cut off like guessing secret URLs", async () => {
  await withApp(async (s, _w, reg) => {
    const form = { grant_type: "authorization_code", code: "x", code_verifier: "v" };
    // The limit counts per clock minute: the 61 requests must fall in one.
    await clearOfWindowEdge();
    for (let i = 0; i < 60; i++) {
      const miss = await tokenRequest(s, { app: reg.app, secret: `tcs_guess${i}`, form });
      assert.equal(miss.res.status, 401, `guess ${i}`);
    }
    const cut = await tokenRequest(s, { ...reg, form });
    assert.equal(cut.res.status, 429, "even the right secret, this minute");
    assert.equal(cut.body.error, "slow_down");
    assert.ok(cut.res.headers.get("Retry-After"));
  });
});
