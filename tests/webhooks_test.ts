/** The /webhooks API: create, list, show, delete, redeliver; validation, scoping, audit. */
import assert from "node:assert/strict";
import { webhookCommands } from "../cli/webhook_commands.ts";
import { enableWebhook, rotateWebhookSecret } from "../domain/webhooks/admin.ts";
import type { Subscription } from "../core/webhook_records.ts";
import { listAudit } from "../kv/audit.ts";
import { keys } from "../kv/keys.ts";
import { loadRoutes } from "../kv/routes.ts";
import { actor, api, assertInvalid, startServer, withWorkspace, workspace } from "./harness.ts";
import { AppSender } from "../delivery/apps/sender.ts";
import { post, receiver, show, subscribe, waitUntil } from "./webhook_receivers.ts";
import type { Store } from "../kv/store/store.ts";
import { subjectOfPerson } from "../domain/principals.ts";

const HOOK = "http://127.0.0.1:9/hook";
const valid = { name: "CI", url: HOOK, events: ["message.created"] };

/** A command's notes to the operator, which these tests do not read. */
const ignoreNotes = () => {};

Deno.test("webhooks: create returns the secret once; list and show never do", async () => {
  await withWorkspace(async (s, w) => {
    const res = await api(s, "POST", "/webhooks", {
      token: w.admin.token,
      body: { ...valid, events: ["message.created", "reaction.added", "message.created"] },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.match(res.body.secret, /^whsec_[0-9A-Za-z]{32,}$/);
    const sub = res.body.data;
    assert.deepEqual(sub.events, ["message.created", "reaction.added"]);
    assert.equal(sub.channel_ids, null);
    assert.equal(sub.status, "active");
    assert.equal(sub.consecutive_failures, 0);
    assert.equal(sub.last_success_at, null);
    assert.equal(sub.disabled_at, null);

    const storedEntry = await s.ctx.kv.get<Subscription>(keys.webhook(sub.id));
    const stored = storedEntry.value!;
    assert.ok(!JSON.stringify(stored).includes(res.body.secret), "secret stored in plaintext");
    assert.equal(await s.ctx.keyring.decrypt(stored.secret), res.body.secret);
    const routes = await loadRoutes(s.ctx.kv, w.team.id);
    assert.deepEqual(routes, [{
      id: sub.id,
      route: {
        events: sub.events,
        channel_ids: null,
        status: "active",
        owner: { id: w.admin.user.id, type: "human" },
      },
      // The commit that wrote the subscription: its events' jobs carry it (see DeliveryJob).
      version: storedEntry.versionstamp,
    }]);

    const shown = await show(s, w.admin.token, sub.id);
    assert.deepEqual(shown.deliveries, []);
    assert.equal(shown.secret, undefined);
    const list = await api(s, "GET", "/webhooks", { token: w.admin.token });
    assert.equal(list.status, 200);
    assert.equal(JSON.stringify(list.body).includes("whsec_"), false);

    const audit = await listAudit(s.ctx.kv, w.team.id, 10);
    const created = audit.find((a) => a.action === "webhook.created")!;
    assert.equal(created.target_id, sub.id);
    assert.equal(created.actor_id, w.admin.user.id);
    assert.equal(JSON.stringify(audit).includes(res.body.secret), false);
  });
});

Deno.test("webhooks: list is newest first and team-scoped", async () => {
  await withWorkspace(async (s, w) => {
    const ids: string[] = [];
    for (const name of ["one", "two", "three"]) {
      ids.push((await subscribe(s, w.member.token, HOOK, { name })).id);
    }
    const other = await workspace(s.ctx, "Other");
    const foreign = await subscribe(s, other.admin.token, HOOK, { name: "theirs" });
    const list = await api(s, "GET", "/webhooks", { token: w.member.token });
    assert.deepEqual(list.body.data.map((x: { id: string }) => x.id), ids.reverse());
    for (
      const [method, path] of [
        ["GET", `/webhooks/${foreign.id}`],
        ["DELETE", `/webhooks/${foreign.id}`],
        ["POST", `/webhooks/${foreign.id}/deliveries/${foreign.id}/redeliver`],
        ["GET", "/webhooks/not-a-uuid"],
        ["GET", `/webhooks/${crypto.randomUUID()}`],
      ]
    ) {
      const res = await api(s, method, path, { token: w.admin.token });
      assert.equal(res.status, 404, `${method} ${path}`);
    }
    assert.equal((await show(s, other.admin.token, foreign.id)).id, foreign.id);
  });
});

Deno.test("webhooks: scopes are enforced before anything else", async () => {
  await withWorkspace(async (s, w) => {
    const reader = await actor(s.ctx, w.team, "Reader", "admin", ["webhooks:read"]);
    const none = await actor(s.ctx, w.team, "Nobody", "admin", ["channels:read"]);
    const { id } = await subscribe(s, w.admin.token, HOOK);
    assert.equal((await api(s, "GET", "/webhooks", { token: reader.token })).status, 200);
    assert.equal((await api(s, "GET", "/webhooks", { token: none.token })).status, 403);
    const denied = await api(s, "POST", "/webhooks", { token: reader.token, raw: "nonsense" });
    assert.equal(denied.status, 403);
    assert.equal((await api(s, "DELETE", `/webhooks/${id}`, { token: reader.token })).status, 403);
    assert.equal((await api(s, "GET", `/webhooks/${id}`, { token: none.token })).status, 403);
    assert.equal((await api(s, "GET", "/webhooks", {})).status, 401);
  });
});

Deno.test("webhooks: validation answers 422 per field", async () => {
  await withWorkspace(async (s, w) => {
    const other = await workspace(s.ctx, "Other");
    const cases: [Record<string, unknown>, string][] = [
      [{ ...valid, name: "" }, "name"],
      [{ ...valid, name: "   " }, "name"],
      [{ ...valid, name: "x".repeat(256) }, "name"],
      [{ ...valid, name: 5 }, "name"],
      [{ url: HOOK, events: ["message.created"] }, "name"],
      [{ ...valid, url: undefined }, "url"],
      [{ ...valid, url: "not a url" }, "url"],
      [{ ...valid, url: "ftp://example.com/x" }, "url"],
      [{ ...valid, url: "http://user:pw@127.0.0.1/x" }, "url"],
      [{ ...valid, url: `http://127.0.0.1/${"a".repeat(2040)}` }, "url"],
      [{ ...valid, events: [] }, "events"],
      [{ ...valid, events: "message.created" }, "events"],
      [{ ...valid, events: undefined }, "events"],
      [{ ...valid, events: ["message.created", "message.exploded"] }, "events.1"],
      [{ ...valid, channel_ids: [] }, "channel_ids"],
      [{ ...valid, channel_ids: "general" }, "channel_ids"],
      [{ ...valid, channel_ids: ["nope"] }, "channel_ids.0"],
      [{ ...valid, channel_ids: [crypto.randomUUID()] }, "channel_ids"],
      [{ ...valid, channel_ids: [other.team.general_channel_id] }, "channel_ids"],
    ];
    for (const [body, field] of cases) {
      assertInvalid(await api(s, "POST", "/webhooks", { token: w.admin.token, body }), field);
    }
    assertInvalid(
      await api(s, "POST", "/webhooks", { token: w.admin.token, raw: "[]" }),
      "request",
    );
    const ok = await api(s, "POST", "/webhooks", {
      token: w.admin.token,
      body: { ...valid, url: `http://127.0.0.1/${"a".repeat(2000)}`, name: "x".repeat(255) },
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const scoped = await api(s, "POST", "/webhooks", {
      token: w.admin.token,
      body: { ...valid, channel_ids: [w.team.general_channel_id, w.team.general_channel_id] },
    });
    assert.equal(scoped.status, 201);
    assert.deepEqual(scoped.body.data.channel_ids, [w.team.general_channel_id]);
    const nulled = await api(s, "POST", "/webhooks", {
      token: w.admin.token,
      body: { ...valid, channel_ids: null },
    });
    assert.equal(nulled.body.data.channel_ids, null);
  });
});

Deno.test("webhooks: non-public URLs are refused unless private URLs are allowed", async () => {
  await withWorkspace(async (s, w) => {
    const refused = [
      "http://127.0.0.1/x",
      "http://127.1/x",
      "http://2130706433/x",
      "http://0x7f.0.0.1/x",
      "http://localhost:8080/x",
      "http://app.localhost/x",
      "http://10.1.2.3/x",
      "http://172.16.0.1/x",
      "http://192.168.1.1/x",
      "http://100.64.0.1/x",
      "http://169.254.169.254/latest/meta-data/",
      "http://0.0.0.0/x",
      "http://224.0.0.1/x",
      "http://255.255.255.255/x",
      "http://metadata.google.internal/computeMetadata/v1/",
      "http://METADATA.GOOGLE.INTERNAL./x",
      "http://[::1]/x",
      "http://[::]/x",
      "http://[fe80::1]/x",
      "http://[fc00::1]/x",
      "http://[fd00:ec2::254]/x",
      "http://[ff02::1]/x",
      "http://[::ffff:127.0.0.1]/x",
      "http://[::ffff:169.254.169.254]/x",
      "http://[::ffff:a00:1]/x",
      "http://[64:ff9b::10.0.0.1]/x",
      "http://[::ffff:0:7f00:1]/x",
      "http://[64:ff9b:1::7f00:1]/x",
      "http://[2002:a9fe:a9fe::1]/x",
      "http://name-that-does-not-resolve.invalid/x",
    ];
    for (const url of refused) {
      const res = await api(s, "POST", "/webhooks", {
        token: w.admin.token,
        body: { ...valid, url },
      });
      assertInvalid(res, "url");
    }
    const publicIps = ["http://93.184.216.34/x", "https://[2606:4700::1111]/x"];
    for (const url of publicIps) {
      const res = await api(s, "POST", "/webhooks", {
        token: w.admin.token,
        body: { ...valid, url },
      });
      assert.equal(res.status, 201, `${url}: ${JSON.stringify(res.body)}`);
    }
  }, { WEBHOOKS_ALLOW_PRIVATE_URLS: "false" });
});

Deno.test("webhooks: delete stops everything and is audited", async () => {
  await withWorkspace(async (s, w) => {
    const { id } = await subscribe(s, w.member.token, HOOK);
    await post(s, w.admin.token, w.team.general_channel_id, "queued for the hook");
    assert.equal(await count(s.ctx.kv, keys.jobs(id)), 1);
    const del = await api(s, "DELETE", `/webhooks/${id}`, { token: w.member.token });
    assert.equal(del.status, 204);
    assert.equal(del.body, null);
    assert.equal((await api(s, "GET", `/webhooks/${id}`, { token: w.admin.token })).status, 404);
    assert.equal((await api(s, "DELETE", `/webhooks/${id}`, { token: w.admin.token })).status, 404);
    assert.equal(await count(s.ctx.kv, keys.jobs(id)), 0);
    assert.deepEqual(await loadRoutes(s.ctx.kv, w.team.id), []);
    const audit = await listAudit(s.ctx.kv, w.team.id, 10);
    const deleted = audit.find((a) => a.action === "webhook.deleted")!;
    assert.equal(deleted.target_id, id);
    assert.equal(deleted.actor_id, w.member.user.id);
  });
});

async function count(kv: Store, prefix: Deno.KvKey): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix })) n++;
  return n;
}

Deno.test("webhooks: show lists the 20 most recent deliveries; redeliver sends one more", async () => {
  const r = receiver((n) => new Response(null, { status: n === 0 ? 500 : 204 }));
  const s = await startServer({ WEBHOOKS_MAX_ATTEMPTS: "1" }, { engine: true });
  try {
    const w = await workspace(s.ctx);
    const { id } = await subscribe(s, w.admin.token, r.url);
    const message = await post(s, w.admin.token, w.team.general_channel_id, "hi");
    await r.waitFor(1);
    await waitUntil(async () => (await show(s, w.admin.token, id)).deliveries.length === 1);
    const [failed] = (await show(s, w.admin.token, id)).deliveries;
    assert.equal(failed.succeeded, false);
    assert.equal(failed.response_status, 500);
    assert.equal(failed.error, "HTTP 500");
    assert.equal(failed.attempt, 1);
    assert.equal(failed.next_attempt_at, null, "the only attempt: nothing follows");

    const res = await api(s, "POST", `/webhooks/${id}/deliveries/${failed.id}/redeliver`, {
      token: w.admin.token,
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.event_id, failed.event_id);
    const [first, again] = await r.waitFor(2);
    assert.equal(again.body, first.body);
    assert.equal(JSON.parse(again.body).data.id, message.id);
    assert.equal(again.headers.get("X-Service-Delivery"), failed.event_id);
    await waitUntil(async () => (await show(s, w.admin.token, id)).deliveries.length === 2);
    const shown = await show(s, w.admin.token, id);
    assert.equal(shown.deliveries[0].succeeded, true);
    assert.equal(shown.deliveries[0].response_status, 204);
    assert.equal(shown.deliveries[0].event_id, failed.event_id);
    assert.equal(shown.deliveries[0].attempt, null, "by hand");
    assert.notEqual(shown.deliveries[0].id, failed.id);
    assert.equal(shown.consecutive_failures, 0);
    assert.ok(shown.last_success_at);

    for (let i = 0; i < 22; i++) {
      await post(s, w.admin.token, w.team.general_channel_id, `m${i}`);
    }
    await r.waitFor(24);
    await waitUntil(async () => (await count(s.ctx.kv, keys.deliverySlots(id))) === 24);
    const recent = (await show(s, w.admin.token, id)).deliveries;
    assert.equal(recent.length, 20);
    const times = recent.map((d: { id: string }) => d.id);
    assert.deepEqual(times, [...times].sort().reverse());

    const missing = await api(
      s,
      "POST",
      `/webhooks/${id}/deliveries/${crypto.randomUUID()}/redeliver`,
      { token: w.admin.token },
    );
    assert.equal(missing.status, 404);
    const other = await subscribe(s, w.admin.token, r.url);
    const crossed = await api(
      s,
      "POST",
      `/webhooks/${other.id}/deliveries/${failed.id}/redeliver`,
      {
        token: w.admin.token,
      },
    );
    assert.equal(crossed.status, 404);
    const reader = await actor(s.ctx, w.team, "Reader", "admin", ["webhooks:read"]);
    const forbidden = await api(s, "POST", `/webhooks/${id}/deliveries/${failed.id}/redeliver`, {
      token: reader.token,
    });
    assert.equal(forbidden.status, 403);
  } finally {
    await s.close();
    await r.close();
  }
});

Deno.test("webhooks: a failed attempt says its number and when the next try is due", async () => {
  const r = receiver(() => new Response(null, { status: 503 }));
  const s = await startServer({ WEBHOOKS_BACKOFF: "1h", WEBHOOKS_MAX_ATTEMPTS: "3" }, {
    engine: true,
  });
  try {
    const w = await workspace(s.ctx);
    const { id } = await subscribe(s, w.admin.token, r.url);
    await post(s, w.admin.token, w.team.general_channel_id, "hi");
    const sent = Date.now();
    await waitUntil(async () => (await show(s, w.admin.token, id)).deliveries.length === 1);
    const [failed] = (await show(s, w.admin.token, id)).deliveries;
    assert.equal(failed.attempt, 1);
    const due = Date.parse(failed.next_attempt_at) - sent;
    assert.ok(due > 0.85 * 3_600_000 && due < 1.15 * 3_600_000, `due in ${due} ms`);
  } finally {
    await s.close();
    await r.close();
  }
});

Deno.test("webhooks: a disabled subscription cannot be redelivered until enabled", async () => {
  const r = receiver(() => new Response("no", { status: 500 }));
  const s = await startServer(
    { WEBHOOKS_MAX_ATTEMPTS: "1", WEBHOOKS_DISABLE_AFTER: "1" },
    { engine: true },
  );
  try {
    const w = await workspace(s.ctx);
    const { id } = await subscribe(s, w.admin.token, r.url);
    await post(s, w.admin.token, w.team.general_channel_id, "hi");
    await waitUntil(async () => (await show(s, w.admin.token, id)).status === "disabled");
    const [delivery] = (await show(s, w.admin.token, id)).deliveries;
    const res = await api(s, "POST", `/webhooks/${id}/deliveries/${delivery.id}/redeliver`, {
      token: w.admin.token,
    });
    assertInvalid(res, "webhookSubscription");

    const enabled = await enableWebhook(s.ctx, id, subjectOfPerson(w.admin.user));
    assert.equal(enabled.status, "active");
    assert.equal(enabled.consecutive_failures, 0);
    assert.equal(enabled.disabled_at, null);
    const routes = await loadRoutes(s.ctx.kv, w.team.id);
    assert.equal(routes[0].route.status, "active");
    await assert.rejects(() => enableWebhook(s.ctx, id, null), /already active/);
    const again = await api(s, "POST", `/webhooks/${id}/deliveries/${delivery.id}/redeliver`, {
      token: w.admin.token,
    });
    assert.equal(again.status, 202);
    const actions = (await listAudit(s.ctx.kv, w.team.id, 20)).map((a) => [a.action, a.actor_id]);
    assert.deepEqual(actions.filter(([a]) => String(a).startsWith("webhook.")), [
      ["webhook.enabled", w.admin.user.id],
      ["webhook.disabled", null],
      ["webhook.created", w.admin.user.id],
    ]);
  } finally {
    await s.close();
    await r.close();
  }
});

Deno.test("webhooks: rotate keeps the old secret for 24 hours and audits", async () => {
  await withWorkspace(async (s, w) => {
    const { id, secret } = await subscribe(s, w.admin.token, HOOK);
    const before = Date.now();
    const rotated = await rotateWebhookSecret(s.ctx, id, null);
    assert.match(rotated.secret, /^whsec_[0-9A-Za-z]{32,}$/);
    assert.notEqual(rotated.secret, secret);
    const stored = rotated.subscription;
    assert.equal(await s.ctx.keyring.decrypt(stored.secret), rotated.secret);
    assert.equal(await s.ctx.keyring.decrypt(stored.previous_secret!), secret);
    const expires = Date.parse(stored.previous_secret_expires_at!);
    assert.ok(Math.abs(expires - before - 24 * 3_600_000) < 5_000);
    const audit = await listAudit(s.ctx.kv, w.team.id, 5);
    assert.equal(audit[0].action, "webhook.secret_rotated");
    assert.equal(audit[0].actor_id, null);
    assert.equal(audit[0].actor_type, "system");
    await assert.rejects(() => rotateWebhookSecret(s.ctx, crypto.randomUUID(), null), /not found/);
  });
});

Deno.test("webhooks: CLI commands webhook:enable and webhook:rotate-secret", async () => {
  await withWorkspace(async (s, w) => {
    const { id } = await subscribe(s, w.admin.token, HOOK);
    const rotated = await webhookCommands["webhook:rotate-secret"].run(
      s.ctx,
      { id },
      new AppSender(),
      ignoreNotes,
    ) as {
      id: string;
      secret: string;
    };
    assert.equal(rotated.id, id);
    assert.match(rotated.secret, /^whsec_/);
    await assert.rejects(
      () => webhookCommands["webhook:enable"].run(s.ctx, { id }, new AppSender(), ignoreNotes),
      /active/,
    );
    const entry = await s.ctx.kv.get<Subscription>(keys.webhook(id));
    await s.ctx.kv.set(keys.webhook(id), { ...entry.value!, status: "disabled" });
    const enabled = await webhookCommands["webhook:enable"].run(
      s.ctx,
      { id },
      new AppSender(),
      ignoreNotes,
    ) as Record<
      string,
      unknown
    >;
    assert.equal(enabled.id, id);
    assert.equal(enabled.status, "active");
    assert.equal("secret" in enabled, false);
    assert.match(webhookCommands["webhook:enable"].usage, /--id/);
  });
});
