/**
 * People leave and roles change (decisions.md, "Authority over time"; issue 29 finding 5), on
 * two instances: deactivation ends at once what acted for the person (tokens, streams, sessions,
 * subscriptions, a bot's incoming webhooks), keeps its messages, and can be undone without
 * reviving any token; a demoted admin loses what the role gave on its very next request; the
 * last active owner stays.
 */
import assert from "node:assert/strict";
import { api, signedInCookie, withWorkspace, workspace } from "./harness.ts";
import { cli, cliRun, type Service, sharedStore, startService } from "./processes.ts";
import { connect } from "./sse_client.ts";
import { receiver } from "./webhook_receivers.ts";

const call = async (s: Service, token: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${s.url}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
};

Deno.test("people: a deactivated person's tokens, streams, links and subscriptions end at once, everywhere", async () => {
  const r = receiver();
  const store = await sharedStore();
  const [a, b] = [await startService(store.env), await startService(store.env)];
  try {
    const w = await workspace(store.ctx);
    const general = w.team.general_channel_id;
    const sub = await call(a, w.member.token, "POST", "/webhooks", {
      name: "mine",
      url: r.url,
      events: ["message.created"],
    });
    assert.equal(sub.status, 201);
    const posted = await call(a, w.member.token, "POST", `/channels/${general}/messages`, {
      body: "I was here",
    });
    const stream = await connect(`${b.url}/api/v1/events/stream`, w.member.token);
    const link = await cli(store.env, "login-link", "--user", w.member.user.id);
    for (const s of [a, b]) {
      assert.equal((await call(s, w.member.token, "GET", "/channels")).status, 200);
    }

    const done = await cli(store.env, "user:deactivate", "--id", w.member.user.id);
    assert.equal(done.id, w.member.user.id);
    assert.ok(done.deactivated_at);
    for (const s of [a, b]) {
      assert.equal((await call(s, w.member.token, "GET", "/channels")).status, 401, "at once");
    }
    await stream.ended;
    const used = await fetch(`${a.url}${new URL(link.url).pathname}`, {
      method: "POST",
      redirect: "manual",
    });
    assert.equal(used.status, 404, "its sign-in link ended");
    await used.body?.cancel();
    const shown = await call(a, w.admin.token, "GET", `/webhooks/${sub.body.data.id}`);
    assert.equal(shown.body.data.status, "disabled");
    const audit = await cli(store.env, "audit:list", "--team", w.team.id);
    const actions = audit.map((e: { action: string }) => e.action);
    assert.ok(actions.includes("user.deactivated") && actions.includes("webhook.disabled"));
    const kept = await call(
      a,
      w.admin.token,
      "GET",
      `/channels/${general}/messages/${posted.body.data.id}`,
    );
    assert.equal(kept.status, 200, "its messages stay");
    const room = await call(a, w.admin.token, "POST", "/channels", {
      name: "room",
      visibility: "public",
    });
    const added = await call(a, w.admin.token, "POST", `/channels/${room.body.data.id}/members`, {
      user_id: w.member.user.id,
    });
    assert.equal(added.status, 422);
    assert.ok(added.body.errors.user_id);
    assert.equal(
      (await cliRun(store.env, "token:create", "--user", w.member.user.id, "--scopes", "all")).code,
      1,
    );

    await cli(store.env, "user:reactivate", "--id", w.member.user.id);
    assert.equal(
      (await call(b, w.member.token, "GET", "/channels")).status,
      401,
      "no token revived",
    );
    const fresh = await cli(
      store.env,
      "token:create",
      "--user",
      w.member.user.id,
      "--scopes",
      "all",
    );
    assert.equal((await call(b, fresh.token, "GET", "/channels")).status, 200);
    assert.equal(
      (await call(a, w.admin.token, "GET", `/webhooks/${sub.body.data.id}`)).body.data.status,
      "disabled",
    );
  } finally {
    await a.kill();
    await b.kill();
    await r.close();
    await store.cleanup();
  }
});

Deno.test("people: a deactivated bot's incoming webhooks answer 404", async () => {
  const store = await sharedStore();
  const a = await startService(store.env);
  try {
    const w = await workspace(store.ctx);
    const general = w.team.general_channel_id;
    await cli(store.env, "member:add", "--channel", general, "--user", w.bot.user.id);
    const hook = await cli(
      store.env,
      "incoming:create",
      "--channel",
      general,
      "--bot",
      w.bot.user.id,
    );
    const send = () =>
      fetch(`${a.url}${new URL(hook.url).pathname}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ text: "hi" }),
      }).then(async (res) => (await res.body?.cancel(), res.status));
    assert.equal(await send(), 200);
    await cli(store.env, "user:deactivate", "--id", w.bot.user.id);
    assert.equal(await send(), 404);
  } finally {
    await a.kill();
    await store.cleanup();
  }
});

Deno.test("people: a demoted admin loses the role on its next request, on every instance; the last owner stays", async () => {
  const store = await sharedStore();
  const [a, b] = [await startService(store.env), await startService(store.env)];
  try {
    const w = await workspace(store.ctx);
    // A channel the admin did not create: archiving it is an admin's right.
    const room = await call(a, w.member.token, "POST", "/channels", {
      name: "room",
      visibility: "public",
    });
    const archive = (s: Service) =>
      call(s, w.admin.token, "POST", `/channels/${room.body.data.id}/archive`);
    for (const s of [a, b]) {
      assert.equal((await call(s, w.admin.token, "GET", "/channels")).status, 200);
    }
    const changed = await cli(store.env, "user:role", "--id", w.admin.user.id, "--role", "member");
    assert.deepEqual([changed.role, changed.previous_role], ["member", "admin"]);
    for (const s of [a, b]) assert.equal((await archive(s)).status, 403, "demoted at once");
    await cli(store.env, "user:role", "--id", w.admin.user.id, "--role", "admin");
    assert.equal((await archive(b)).status, 200, "promoted again");
    const audit = await cli(store.env, "audit:list", "--team", w.team.id);
    assert.ok(audit.some((e: { action: string }) => e.action === "user.role_changed"));

    const owner = await cli(
      store.env,
      "user:create",
      "--team",
      w.team.id,
      "--name",
      "Olga",
      "--role",
      "owner",
    );
    for (
      const args of [["user:role", "--id", owner.id, "--role", "admin"], [
        "user:deactivate",
        "--id",
        owner.id,
      ]]
    ) {
      const out = await cliRun(store.env, ...args);
      assert.equal(out.code, 1);
      assert.match(out.stderr, /last active owner/);
    }
  } finally {
    await a.kill();
    await b.kill();
    await store.cleanup();
  }
});

Deno.test("people: an admin deactivates a member from the screen, whose own session ends with it", () =>
  withWorkspace(async (s, w) => {
    const page = (cookie: string, path = "/settings/integrations/people") =>
      fetch(`${s.url}${path}`, { headers: { Cookie: cookie } });
    const admin = await signedInCookie(s.url, s.ctx, w.admin.user.id);
    const member = await signedInCookie(s.url, s.ctx, w.member.user.id);
    const before = await page(member, "/settings/integrations");
    await before.body?.cancel();
    assert.equal(before.status, 200);
    const html = await (await page(admin)).text();
    assert.match(html, new RegExp(`Deactivate ${w.member.user.name}`));
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1];
    const res = await fetch(
      `${s.url}/settings/integrations/people/${w.member.user.id}/deactivate`,
      {
        method: "POST",
        redirect: "manual",
        headers: {
          Cookie: admin,
          Origin: s.url,
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ _csrf: csrf }),
      },
    );
    await res.body?.cancel();
    assert.equal(res.status, 303);
    const after = await page(member, "/settings/integrations");
    await after.body?.cancel();
    assert.equal(after.status, 401, "the member's session ended");
    assert.equal((await api(s, "GET", "/channels", { token: w.member.token })).status, 401);
    assert.match(await (await page(admin)).text(), new RegExp(`Reactivate ${w.member.user.name}`));
  }));
