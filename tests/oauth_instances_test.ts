/**
 * Apps across real processes on one store: an app registered by the CLI, approved on one
 * instance and redeemed on another, once; uninstalled by the CLI, and gone on every instance.
 */
import assert from "node:assert/strict";
import type { App } from "../core/app_records.ts";
import { api, workspace } from "./harness.ts";
import { listAudit } from "../kv/audit.ts";
import { cli, cliRun, sharedStore, startService } from "./processes.ts";
import { approvedCode, authorizeQuery, CALLBACK, pkce, tokenRequest } from "./oauth_client.ts";

Deno.test("oauth instances: a code approved on one instance works once on another; the CLI uninstalls everywhere", async () => {
  const store = await sharedStore();
  const [a, b] = await Promise.all([startService(store.env), startService(store.env)]);
  try {
    const made = await cli(
      store.env,
      "app:create",
      "--name",
      "Deploy Tracker",
      "--redirect-uris",
      CALLBACK,
      "--scopes",
      "channels:read,messages:write",
    );
    assert.match(made.client_secret, /^tcs_/);
    const app = made as App;
    const listed = await cli(store.env, "app:list");
    assert.deepEqual(listed.map((x: App) => x.id), [app.id]);
    assert.ok(!("client_secret" in listed[0]) && !("secret_hash" in listed[0]), "no secret listed");

    const w = await workspace(store.ctx);
    const [onA, onB] = [store.as(a), store.as(b)];
    const { verifier, challenge } = await pkce();
    const form = (code: string) => ({
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
    });
    const query = authorizeQuery(app, challenge);
    const code = await approvedCode(onA, { userId: w.admin.user.id, query });
    const first = await tokenRequest(onB, { app, secret: made.client_secret, form: form(code) });
    assert.equal(first.res.status, 200, JSON.stringify(first.body));
    const token = first.body.access_token;
    assert.equal((await api(onA, "GET", "/channels", { token })).status, 200);
    const again = await tokenRequest(onA, { app, secret: made.client_secret, form: form(code) });
    assert.equal(again.body.error, "invalid_grant");
    for (const on of [onA, onB]) {
      assert.equal((await api(on, "GET", "/channels", { token })).status, 401, on.url);
    }

    const second = await tokenRequest(onA, {
      app,
      secret: made.client_secret,
      form: form(await approvedCode(onB, { userId: w.admin.user.id, query })),
    });
    const live = second.body.access_token;
    for (const on of [onA, onB]) {
      assert.equal((await api(on, "GET", "/channels", { token: live })).status, 200, on.url);
    }
    const gone = await cli(store.env, "app:uninstall", "--team", w.team.id, "--app", app.id);
    assert.deepEqual(gone, { app_id: app.id, team_id: w.team.id });
    for (const on of [onA, onB]) {
      assert.equal((await api(on, "GET", "/channels", { token: live })).status, 401, on.url);
    }

    const { client_secret: rotated } = await cli(store.env, "app:rotate-secret", "--id", app.id);
    const stale = await tokenRequest(onB, { app, secret: made.client_secret, form: form("x") });
    assert.equal(stale.body.error, "invalid_client");
    const fresh = await tokenRequest(onB, { app, secret: rotated, form: form("x") });
    assert.equal(fresh.body.error, "invalid_grant", "the new secret authenticates");
    await cli(store.env, "app:delete", "--id", app.id);
    const deleted = await tokenRequest(onA, { app, secret: rotated, form: form("x") });
    assert.equal(deleted.body.error, "invalid_client");

    const audit = JSON.stringify(await listAudit(store.ctx.kv, w.team.id, 100));
    for (const secret of [made.client_secret, rotated, code, token, live, verifier]) {
      for (
        const [where, text] of [["A's log", a.output()], ["B's log", b.output()], ["audit", audit]]
      ) {
        assert.ok(!text.includes(secret), `${where} holds a secret`);
      }
    }

    const hooked = await cli(
      store.env,
      "app:create",
      "--name",
      "Alerts",
      "--incoming-webhook",
      "--redirect-uris",
      CALLBACK,
      "--scopes",
      "messages:write",
    );
    assert.equal(hooked.incoming_webhook, true, "--incoming-webhook takes no value");
    const bad = await cliRun(
      store.env,
      "app:create",
      "--name",
      "x",
      "--redirect-uris",
      "http://example.com/cb",
      "--scopes",
      "all",
    );
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /https \(http only for loopback\)/);
  } finally {
    await Promise.all([a.kill(), b.kill()]);
    await store.cleanup();
  }
});
