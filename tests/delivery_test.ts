/** The delivery engine against real receivers on loopback and a real KV. */
import assert from "node:assert/strict";
import { Connector } from "../core/outbound/connector.ts";
import type { EngineOptions } from "../delivery/engine_contract.ts";
import { retryDelayMs } from "../delivery/schedule.ts";
import { SigningKeys } from "../delivery/secrets.ts";
import { signatureHeader } from "../delivery/sign.ts";
import { send } from "../core/outbound/send.ts";
import { isPublicAddress, parseIp, resolveTarget } from "../core/url_safety.ts";
import { newId } from "../core/ids.ts";
import { loadSettings } from "../core/settings.ts";
import type { OutboxEvent } from "../core/types.ts";
import type { Delivery, Subscription } from "../core/webhook_records.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import { postMessage } from "../domain/messages/messages.ts";
import { enableWebhook, rotateWebhookSecret } from "../domain/webhooks/admin.ts";
import { listAudit } from "../kv/audit.ts";
import { keys } from "../kv/keys.ts";
import { loadRoutes } from "../kv/routes.ts";
import {
  api,
  countKeys,
  signedInCookie,
  startEngine,
  startServer,
  type TestServer,
  unsettled,
  withWorkspace,
  type Workspace,
  workspace,
} from "./harness.ts";
import { validatorAt } from "./openapi_check.ts";
import {
  FAST,
  hmacHex,
  post,
  type Receiver,
  receiver,
  show,
  sleep,
  subscribe,
  waitUntil,
} from "./webhook_receivers.ts";
import { subjectOfPerson } from "../domain/principals.ts";
import { exampleData } from "../domain/webhooks/examples.ts";

const withEngine = (
  env: Record<string, string>,
  fn: (s: TestServer, w: Workspace) => Promise<void>,
  engine: boolean | EngineOptions = true,
) => withWorkspace(fn, { ...FAST, ...env }, { engine });

function signatures(header: string | null): { t: string; v1: string[] } {
  assert.match(header ?? "", /^t=\d+(,v1=[0-9a-f]{64})+$/);
  const parts = header!.split(",");
  return { t: parts[0].slice(2), v1: parts.slice(1).map((p) => p.slice(3)) };
}

async function assertSigned(hit: { headers: Headers; body: string }, ...secrets: string[]) {
  const { t, v1 } = signatures(hit.headers.get("X-Service-Signature"));
  assert.ok(Math.abs(Number(t) - Date.now() / 1000) < 30, "timestamp is the attempt's time");
  assert.deepEqual(v1, await Promise.all(secrets.map((s) => hmacHex(s, t, hit.body))));
}

const closing: Receiver[] = [];
async function closeReceivers() {
  await Promise.all(closing.splice(0).map((r) => r.close()));
}
function tracked(...args: Parameters<typeof receiver>): Receiver {
  const r = receiver(...args);
  closing.push(r);
  return r;
}

Deno.test("delivery: each event reaches every matching subscription, signed, same id", async () => {
  await withEngine({}, async (s, w) => {
    const all = tracked();
    const reactions = tracked();
    const scoped = tracked();
    const ch = await api(s, "POST", "/channels", {
      token: w.admin.token,
      body: { name: "ops", visibility: "public" },
    });
    const ops = ch.body.data.id;
    const a = await subscribe(s, w.admin.token, all.url, {
      events: ["message.created", "message.updated", "reaction.added", "channel.member_added"],
    });
    const b = await subscribe(s, w.admin.token, reactions.url, { events: ["reaction.added"] });
    const c = await subscribe(s, w.admin.token, scoped.url, { channel_ids: [ops] });

    await post(s, w.admin.token, w.team.general_channel_id, "in general");
    const m = await post(s, w.admin.token, ops, "in ops");
    const put = await api(s, "PUT", `/channels/${ops}/messages/${m.id}/reactions/%F0%9F%91%8D`, {
      token: w.admin.token,
    });
    assert.equal(put.status, 204);
    const added = await api(s, "POST", `/channels/${ops}/members`, {
      token: w.admin.token,
      body: { user_id: w.bot.user.id },
    });
    assert.equal(added.status, 201);

    const allHits = await all.waitFor(5);
    const types = allHits.map((h) => h.headers.get("X-Service-Event")).sort();
    assert.deepEqual(types, [
      "channel.member_added",
      "message.created",
      "message.created",
      "message.created",
      "reaction.added",
    ]);
    const [reactionHit] = await reactions.waitFor(1);
    const scopedHits = await scoped.waitFor(2);
    await sleep(100);
    assert.equal(all.hits.length, 5);
    assert.equal(reactions.hits.length, 1);
    assert.equal(scoped.hits.length, 2, "only ops messages, not general ones");

    for (const hit of allHits) await assertSigned(hit, a.secret);
    await assertSigned(reactionHit, b.secret);
    for (const hit of scopedHits) await assertSigned(hit, c.secret);

    const created = JSON.parse(scopedHits[0].body);
    assert.equal(created.data.id, m.id);
    const same = allHits.find((h) => JSON.parse(h.body).id === created.id)!;
    assert.equal(same.body, scopedHits[0].body, "one event, one body for every subscription");
    assert.equal(
      reactionHit.body,
      allHits.find((h) => JSON.parse(h.body).type === "reaction.added")!.body,
    );
    for (const hit of [...allHits, reactionHit, ...scopedHits]) {
      const env = JSON.parse(hit.body);
      assert.equal(hit.headers.get("X-Service-Delivery"), env.id);
      assert.equal(hit.headers.get("X-Service-Event"), env.type);
      assert.equal(hit.headers.get("Content-Type"), "application/json");
      const schema = {
        "message.created": "MessageCreatedEvent",
        "message.updated": "MessageUpdatedEvent",
        "message.deleted": "MessageDeletedEvent",
        "reaction.added": "ReactionAddedEvent",
        "channel.member_added": "ChannelMemberAddedEvent",
      }[env.type as string]!;
      const check = validatorAt(`/components/schemas/${schema}`);
      assert.ok(check(env), `${env.type} envelope matches openapi.yaml: ${hit.body}`);
    }
    await waitUntil(async () => (await unsettled(s.ctx.kv)) === 0);
    const shown = await show(s, w.admin.token, a.id);
    assert.equal(shown.deliveries.length, 5);
    assert.ok(shown.deliveries.every((d: Delivery) => d.succeeded && d.response_status === 200));
  }).finally(closeReceivers);
});

Deno.test("delivery: failures are retried on schedule with the same envelope", async () => {
  await withEngine({}, async (s, w) => {
    const r = tracked((n) => new Response("busy", { status: n < 2 ? 500 : 200 }));
    const sub = await subscribe(s, w.admin.token, r.url);
    await post(s, w.admin.token, w.team.general_channel_id, "again and again");
    const hits = await r.waitFor(3);
    assert.equal(hits[1].body, hits[0].body);
    assert.equal(hits[2].body, hits[0].body);
    assert.ok(
      hits[1].at - hits[0].at >= 95,
      `first retry after ~100ms: ${hits[1].at - hits[0].at}`,
    );
    assert.ok(hits[2].at - hits[1].at >= 195, `second after ~200ms: ${hits[2].at - hits[1].at}`);
    for (const hit of hits) await assertSigned(hit, sub.secret);
    await waitUntil(async () => (await show(s, w.admin.token, sub.id)).deliveries.length === 3);
    const shown = await show(s, w.admin.token, sub.id);
    assert.deepEqual(
      shown.deliveries.map((d: Delivery) => [d.succeeded, d.response_status, d.error]),
      [[true, 200, null], [false, 500, "HTTP 500"], [false, 500, "HTTP 500"]],
    );
    const eventId = JSON.parse(hits[0].body).id;
    assert.ok(shown.deliveries.every((d: Delivery) => d.event_id === eventId));
    assert.equal(shown.consecutive_failures, 0);
    assert.ok(shown.last_success_at);
    assert.equal(await unsettled(s.ctx.kv), 0);
    await sleep(300);
    assert.equal(r.hits.length, 3, "nothing after the success");
  }).finally(closeReceivers);
});

Deno.test("delivery: gives up after WEBHOOKS_MAX_ATTEMPTS", async () => {
  await withEngine({ WEBHOOKS_MAX_ATTEMPTS: "3", WEBHOOKS_BACKOFF: "50ms" }, async (s, w) => {
    const r = tracked(() => new Response("down", { status: 503 }));
    const sub = await subscribe(s, w.admin.token, r.url);
    await post(s, w.admin.token, w.team.general_channel_id, "never lands");
    await r.waitFor(3);
    await waitUntil(async () => (await unsettled(s.ctx.kv)) === 0);
    await sleep(300);
    assert.equal(r.hits.length, 3);
    const shown = await show(s, w.admin.token, sub.id);
    assert.equal(shown.deliveries.length, 3);
    assert.equal(shown.consecutive_failures, 3);
    assert.equal(shown.status, "active");
  }).finally(closeReceivers);
});

Deno.test("delivery: disables after WEBHOOKS_DISABLE_AFTER failures and drops what is pending", async () => {
  await withEngine(
    { WEBHOOKS_DISABLE_AFTER: "3", WEBHOOKS_MAX_ATTEMPTS: "10", WEBHOOKS_BACKOFF: "50ms" },
    async (s, w) => {
      let healthy = false;
      const r = tracked(() => new Response(null, { status: healthy ? 200 : 500 }));
      const sub = await subscribe(s, w.admin.token, r.url);
      await post(s, w.admin.token, w.team.general_channel_id, "one");
      await post(s, w.admin.token, w.team.general_channel_id, "two");
      await waitUntil(async () => (await show(s, w.admin.token, sub.id)).status === "disabled");
      await sleep(300);
      assert.equal(r.hits.length, 3, "the third failure in a row disables");
      const shown = await show(s, w.admin.token, sub.id);
      assert.equal(shown.consecutive_failures, 3);
      assert.ok(shown.disabled_at);
      assert.equal(shown.deliveries.length, 3);
      assert.equal(await unsettled(s.ctx.kv, sub.id), 0, "pending retries dropped");
      assert.equal((await loadRoutes(s.ctx.kv, w.team.id))[0].route.status, "disabled");
      const audit = await listAudit(s.ctx.kv, w.team.id, 5);
      assert.equal(audit[0].action, "webhook.disabled");
      assert.equal(audit[0].actor_id, null);
      assert.equal(audit[0].actor_type, "system");
      assert.equal(audit[0].target_id, sub.id);

      await post(s, w.admin.token, w.team.general_channel_id, "while disabled");
      assert.equal(await unsettled(s.ctx.kv, sub.id), 0, "no job for a disabled one");
      healthy = true;
      await enableWebhook(s.ctx, sub.id, null);
      const m = await post(s, w.admin.token, w.team.general_channel_id, "after enable");
      const hits = await r.waitFor(4);
      assert.equal(JSON.parse(hits[3].body).data.id, m.id);
      await waitUntil(async () => (await show(s, w.admin.token, sub.id)).last_success_at !== null);
      assert.equal((await show(s, w.admin.token, sub.id)).consecutive_failures, 0);
    },
    { perSubscription: 1 },
  ).finally(closeReceivers);
});

Deno.test("delivery: a deleted subscription gets no further attempts", async () => {
  await withEngine({ WEBHOOKS_BACKOFF: "300ms" }, async (s, w) => {
    const r = tracked(() => new Response(null, { status: 500 }));
    const sub = await subscribe(s, w.admin.token, r.url);
    await post(s, w.admin.token, w.team.general_channel_id, "soon gone");
    await r.waitFor(1);
    await waitUntil(async () => (await countKeys(s.ctx.kv, keys.deliverySlots(sub.id))) === 1);
    assert.equal(
      (await api(s, "DELETE", `/webhooks/${sub.id}`, { token: w.admin.token })).status,
      204,
    );
    await sleep(700);
    assert.equal(r.hits.length, 1);
    assert.equal(await unsettled(s.ctx.kv), 0);
    for (
      const prefix of [
        keys.deliverySlots(sub.id),
        keys.deliveryCounts(sub.id),
        keys.jobCounts(sub.id),
      ]
    ) {
      assert.equal(await countKeys(s.ctx.kv, prefix), 0, `nothing left under ${prefix[0]}`);
    }
  }).finally(closeReceivers);
});

Deno.test("delivery: after a rotation, both secrets sign for 24 hours, then only the new", async () => {
  await withEngine({}, async (s, w) => {
    const r = tracked();
    const sub = await subscribe(s, w.admin.token, r.url);
    const { secret } = await rotateWebhookSecret(s.ctx, sub.id, subjectOfPerson(w.admin.user));
    await post(s, w.admin.token, w.team.general_channel_id, "during overlap");
    const [overlap] = await r.waitFor(1);
    await assertSigned(overlap, secret, sub.secret);

    const stored = (await s.ctx.kv.get<Subscription>(keys.webhook(sub.id))).value!;
    const signing = new SigningKeys(s.ctx.keyring);
    const expiry = Date.parse(stored.previous_secret_expires_at!);
    const body = '{"id":"x"}';
    const during = await signatureHeader(await signing.for(stored, expiry - 1), body, expiry - 1);
    const after = await signatureHeader(await signing.for(stored, expiry + 1), body, expiry + 1);
    const t = String(Math.floor((expiry - 1) / 1000));
    assert.equal(
      during,
      `t=${t},v1=${await hmacHex(secret, t, body)},v1=${await hmacHex(sub.secret, t, body)}`,
    );
    const t2 = String(Math.floor((expiry + 1) / 1000));
    assert.equal(after, `t=${t2},v1=${await hmacHex(secret, t2, body)}`, "only the new one after");
  }).finally(closeReceivers);
});

Deno.test("delivery: a slow endpoint does not delay other subscriptions", async () => {
  await withEngine({ WEBHOOKS_TIMEOUT: "2" }, async (s, w) => {
    const release = Promise.withResolvers<void>();
    const slow = tracked(async () => {
      await release.promise;
      return new Response("late");
    });
    const fast = tracked();
    await subscribe(s, w.admin.token, slow.url);
    await subscribe(s, w.admin.token, fast.url);
    const started = Date.now();
    for (let i = 0; i < 20; i++) await post(s, w.admin.token, w.team.general_channel_id, `m${i}`);
    await fast.waitFor(20, 1_500);
    assert.ok(Date.now() - started < 1_500);
    assert.equal(slow.hits.length, 2, "the slow one holds only its own slots");
    release.resolve();
    await slow.waitFor(20);
  }, { perSubscription: 2 }).finally(closeReceivers);
});

/** A receiver that answers after `ms`, noting the most requests it had in hand at once. */
function slowReceiver(ms: number, status: number) {
  let inHand = 0;
  const seen = { most: 0 };
  const r = tracked(async () => {
    seen.most = Math.max(seen.most, ++inHand);
    await sleep(ms);
    inHand--;
    return new Response("", { status });
  });
  return Object.assign(r, { seen });
}

Deno.test("delivery: a slow but sure receiver gets more attempts in flight, a failing one no more", async () => {
  await withEngine({ WEBHOOKS_BACKOFF: "1m", WEBHOOKS_DISABLE_AFTER: "1000" }, async (s, w) => {
    const sure = slowReceiver(150, 200);
    const failing = slowReceiver(150, 500);
    await subscribe(s, w.admin.token, sure.url, { name: "sure" });
    await subscribe(s, w.admin.token, failing.url, { name: "failing" });
    const events = 60;
    const subject = await authenticate(s.ctx, w.admin.token);
    for (let i = 0; i < events; i++) {
      await postMessage(s.ctx, subject, w.team.general_channel_id, {
        ok: true,
        value: { body: `backlog ${i}` },
      });
    }
    await sure.waitFor(events, 10_000);
    await failing.waitFor(events, 10_000);
    assert.ok(sure.seen.most > 4, `at most ${sure.seen.most} at once`);
    assert.ok(sure.seen.most <= 8, `at most ${sure.seen.most} at once`);
    assert.equal(failing.seen.most, 4, "a failing receiver holds perSubscription slots");
  }, { maxPerSubscription: 8 }).finally(closeReceivers);
});

Deno.test("delivery: many events to several subscriptions, each exactly once when all goes well", async () => {
  await withEngine({}, async (s, w) => {
    const rs = [tracked(), tracked(), tracked()];
    const subs = [];
    for (const r of rs) subs.push(await subscribe(s, w.admin.token, r.url));
    const posts = [];
    for (let i = 0; i < 60; i++) {
      posts.push(post(s, [w.admin, w.member][i % 2].token, w.team.general_channel_id, `n${i}`));
    }
    await Promise.all(posts);
    for (const r of rs) {
      const hits = await r.waitFor(60);
      assert.equal(new Set(hits.map((h) => JSON.parse(h.body).id)).size, 60);
    }
    await waitUntil(async () => (await unsettled(s.ctx.kv)) === 0);
    for (const sub of subs) {
      await waitUntil(async () => (await countKeys(s.ctx.kv, keys.deliverySlots(sub.id))) === 60);
      const stored = (await s.ctx.kv.get<Subscription>(keys.webhook(sub.id))).value!;
      assert.equal(stored.consecutive_failures, 0);
    }
    await sleep(200);
    assert.deepEqual(rs.map((r) => r.hits.length), [60, 60, 60], "queue wake-ups add nothing");
  }).finally(closeReceivers);
});

Deno.test("delivery: the sweeper delivers jobs whose queue message never came, and prunes the records older releases keyed by id beyond the latest 100 of both layouts", async () => {
  const s = await startServer(FAST);
  const r = receiver();
  try {
    const w = await workspace(s.ctx);
    const sub = await subscribe(s, w.admin.token, r.url);
    const event: OutboxEvent = {
      id: newId(),
      type: "message.created",
      team_id: w.team.id,
      channel_id: w.team.general_channel_id,
      created_at: new Date().toISOString(),
      data: exampleData("message.created", { channelId: w.team.general_channel_id }),
    };
    const now = new Date().toISOString();
    await s.ctx.kv.atomic()
      .set(keys.event(event.id), event)
      .set(keys.job(sub.id, event.id), {
        subscription_id: sub.id,
        event_id: event.id,
        attempt: 1,
        next_attempt_at: now,
        created_at: now,
      })
      .commit();
    for (let i = 0; i < 130; i++) {
      const id = newId(Date.now() - 100_000 + i);
      const d: Delivery = {
        id,
        subscription_id: sub.id,
        event_id: event.id,
        event_type: "message.created",
        attempt: 1,
        succeeded: true,
        response_status: 200,
        error: null,
        created_at: now,
      };
      await s.ctx.kv.set(keys.delivery(sub.id, id), d);
    }
    const engine = startEngine(s.ctx, { sweepEveryMs: 60_000 });
    try {
      const [hit] = await r.waitFor(1);
      assert.equal(JSON.parse(hit.body).id, event.id);
      await engine.idle();
      await waitUntil(async () => (await unsettled(s.ctx.kv)) === 0);
      // The attempt's record lands in the ring after the job is gone; a sweep after it leaves
      // the 99 newest keyed by id.
      await waitUntil(async () => {
        await engine.sweep();
        return (await countKeys(s.ctx.kv, keys.deliveries(sub.id))) === 99;
      });
      assert.equal(await countKeys(s.ctx.kv, keys.deliverySlots(sub.id)), 1);
      const newest = await show(s, w.admin.token, sub.id);
      assert.equal(newest.deliveries[0].id > newest.deliveries[1].id, true);
      assert.equal(newest.deliveries[0].event_id, event.id);
    } finally {
      await engine.stop();
    }
  } finally {
    await s.close();
    await r.close();
  }
});

Deno.test("delivery: repeated and unknown queue messages change nothing", async () => {
  await withEngine({}, async (s, w) => {
    const r = tracked();
    const sub = await subscribe(s, w.admin.token, r.url);
    const m = await post(s, w.admin.token, w.team.general_channel_id, "once");
    const [hit] = await r.waitFor(1);
    const eventId = JSON.parse(hit.body).id;
    await waitUntil(async () => (await unsettled(s.ctx.kv)) === 0);
    await s.ctx.kv.atomic().enqueue({ kind: "event", event_id: eventId }).commit();
    await s.ctx.kv.atomic().enqueue({
      kind: "retry",
      subscription_id: sub.id,
      event_id: eventId,
      attempt: 2,
    }).commit();
    await s.ctx.kv.atomic().enqueue({ kind: "mystery" }).commit();
    await s.ctx.kv.atomic().enqueue("not even an object").commit();
    await sleep(400);
    assert.equal(r.hits.length, 1);
    assert.equal(JSON.parse(hit.body).data.id, m.id);
  }).finally(closeReceivers);
});

Deno.test("delivery: the URL is checked again before every attempt", async () => {
  await withEngine({}, async (s, w) => {
    const r = tracked();
    const sub = await subscribe(s, w.admin.token, r.url);
    s.ctx.settings.webhooks.allowPrivateUrls = false;
    await post(s, w.admin.token, w.team.general_channel_id, "to loopback");
    await waitUntil(async () => (await show(s, w.admin.token, sub.id)).deliveries.length === 1);
    const [d] = (await show(s, w.admin.token, sub.id)).deliveries;
    assert.equal(d.succeeded, false);
    assert.equal(d.response_status, null);
    assert.match(d.error, /public address/);
    assert.equal(r.hits.length, 0);
  }).finally(closeReceivers);
});

Deno.test("ssrf: addresses", () => {
  const refused = [
    "0.0.0.0",
    "0.1.2.3",
    "10.0.0.1",
    "100.64.0.1",
    "100.127.255.255",
    "127.0.0.1",
    "127.255.0.1",
    "169.254.169.254",
    "169.254.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.0.1",
    "192.0.0.8",
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "240.0.0.1",
    "::",
    "::1",
    "fe80::1",
    "febf::1",
    "fc00::1",
    "fd00:ec2::254",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:0:0",
    "::127.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "::ffff:0:7f00:1",
    "::ffff:0:10.0.0.1",
    "64:ff9b:1::7f00:1",
    "64:ff9b:1::808:808",
    "2002:7f00:1::",
    "2001:db8::1",
  ];
  const allowed = [
    "1.1.1.1",
    "8.8.8.8",
    "93.184.216.34",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "169.253.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "::ffff:0:808:808",
    "2002:808:808::1",
  ];
  for (const a of refused) assert.equal(isPublicAddress(parseIp(a)!), false, a);
  for (const a of allowed) assert.equal(isPublicAddress(parseIp(a)!), true, a);
  for (
    const bad of ["1.2.3", "1.2.3.256", "::1::2", "12345::", "example.com", "1:2:3:4:5:6:7:8:9"]
  ) {
    assert.equal(parseIp(bad), null, bad);
  }
});

Deno.test("ssrf: every resolved address must be public; the checked one is used", async () => {
  const answers: Record<string, string[]> = {
    "mixed.example.test": ["93.184.216.34", "10.0.0.5"],
    "public.example.test": ["2606:4700::1", "93.184.216.34"],
    "rebind.example.test": ["169.254.169.254"],
  };
  const resolver = (host: string) => Promise.resolve(answers[host] ?? []);
  const strict = { allowPrivate: false, resolver };
  await assert.rejects(() => resolveTarget("http://mixed.example.test/", strict), /public/);
  await assert.rejects(() => resolveTarget("http://rebind.example.test/", strict), /metadata/);
  await assert.rejects(() => resolveTarget("http://nothing.example.test/", strict), /resolve/);
  const ok = await resolveTarget("https://public.example.test/x", strict);
  assert.equal(ok.address, "93.184.216.34", "IPv4 preferred");
  assert.equal(ok.literal, false);
  const lit = await resolveTarget("http://[2606:4700::1]:8080/", strict);
  assert.equal(lit.address, "2606:4700::1");
  assert.equal(lit.literal, true);
});

const TEST_CA = `-----BEGIN CERTIFICATE-----
MIIBZzCCAQ6gAwIBAgICEAAwCgYIKoZIzj0EAwIwGjEYMBYGA1UEAwwPV2ViaG9v
ayBUZXN0IENBMCAXDTAwMDEwMTAwMDAwMFoYDzIxMDAwMTAxMDAwMDAwWjAaMRgw
FgYDVQQDDA9XZWJob29rIFRlc3QgQ0EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC
AAR1LgBUYDLRbQAK+vWoUTO0wlsCQSq6SuOZ2PhnC/F6zdvofAhhIwmyJZpQrq+A
DROeUpPD2IAbEx4xGpM42336o0IwQDAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB
/wQEAwIBBjAdBgNVHQ4EFgQUnccSrfhCXlB/7++jNaAC4oOuJ50wCgYIKoZIzj0E
AwIDRwAwRAIgFCek5JjmJIbhC+ISqXZpcFXQobNa3BKt1eW3zzA+v6YCIF96oLLk
2IzdtVwke9VtSi4mHbSFjankoYnf2ei9iw7i
-----END CERTIFICATE-----`;

/** For hook.example.test, signed by TEST_CA, valid 2000–2100. */
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBujCCAWCgAwIBAgICEAEwCgYIKoZIzj0EAwIwGjEYMBYGA1UEAwwPV2ViaG9v
ayBUZXN0IENBMCAXDTAwMDEwMTAwMDAwMFoYDzIxMDAwMTAxMDAwMDAwWjAcMRow
GAYDVQQDDBFob29rLmV4YW1wbGUudGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEH
A0IABKHRAc/VVPflrCx8UoBbhGcPF0dFTo1wqg+mg6oMIHJMOUvuNIzSmptPd+hA
5Tik+SZqaiZH4I+7bEZaxfIGj6+jgZEwgY4wCQYDVR0TBAIwADAcBgNVHREEFTAT
ghFob29rLmV4YW1wbGUudGVzdDATBgNVHSUEDDAKBggrBgEFBQcDATAOBgNVHQ8B
Af8EBAMCB4AwHwYDVR0jBBgwFoAUnccSrfhCXlB/7++jNaAC4oOuJ50wHQYDVR0O
BBYEFPs4pPPRVLB9Z+nkr+qaecekQvG7MAoGCCqGSM49BAMCA0gAMEUCIQDSJUrf
q+oGkQTSHewUZ+fRSjIsmYMuISvfS4rrta3AsQIgH6gxmU7QaoCSdC+WZwLvCF8W
kS5CXcM+ZSc/aVsKDvA=
-----END CERTIFICATE-----`;

const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgym4xPWLgLnMdznB3
QHpH9iqzoBISfZZ13oKwV/3LAVGhRANCAASh0QHP1VT35awsfFKAW4RnDxdHRU6N
cKoPpoOqDCByTDlL7jSM0pqbT3foQOU4pPkmamomR+CPu2xGWsXyBo+v
-----END PRIVATE KEY-----`;

Deno.test("ssrf: attempts connect to the checked address, for http and https", async () => {
  const seen: string[] = [];
  const handler = (req: Request) => {
    seen.push(`${req.url} host=${req.headers.get("host") ?? new URL(req.url).host}`);
    return new Response("ok");
  };
  const tls = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: TEST_CERT, key: TEST_KEY, onListen() {} },
    handler,
  );
  const plain = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  const connector = new Connector({ caCerts: [TEST_CA] });
  const lookups: string[] = [];
  // The name resolves nowhere real: only the pinned address can make these attempts land.
  const resolver = (host: string) => {
    lookups.push(host);
    return Promise.resolve(["127.0.0.1"]);
  };
  const opts = { connector, timeoutMs: 2_000, allowPrivate: true, resolver };
  try {
    const https = `https://hook.example.test:${tls.addr.port}/in?x=1`;
    const http = `http://hook.example.test:${plain.addr.port}/in`;
    for (const url of [https, https, http]) {
      const outcome = await send(url, { "Content-Type": "application/json" }, "{}", opts);
      assert.equal(outcome.succeeded, true, `${url}: ${outcome.error}`);
    }
    assert.deepEqual(seen, [
      `${https} host=hook.example.test:${tls.addr.port}`,
      `${https} host=hook.example.test:${tls.addr.port}`,
      `${http} host=hook.example.test:${plain.addr.port}`,
    ]);
    assert.deepEqual(lookups, ["hook.example.test", "hook.example.test", "hook.example.test"]);
    const wrongName = await send(`https://other.example.test:${tls.addr.port}/`, {}, "{}", opts);
    assert.equal(wrongName.succeeded, false);
    assert.equal(wrongName.error, "TLS error", "TLS still verifies the URL's host name");
  } finally {
    connector.close();
    await tls.shutdown();
    await plain.shutdown();
  }
});

Deno.test("schedule: backoff with up to 10% jitter, Retry-After honoured within reason", () => {
  const webhooks = loadSettings({ WEBHOOKS_BACKOFF: "10s,1m,5m" }).webhooks;
  assert.equal(retryDelayMs(webhooks, 1, null, () => 0), 10_000);
  assert.equal(retryDelayMs(webhooks, 1, null, () => 0.999), 10_999);
  assert.equal(retryDelayMs(webhooks, 2, null, () => 0.5), 63_000);
  assert.equal(retryDelayMs(webhooks, 7, null, () => 0), 300_000, "the last interval repeats");
  assert.equal(retryDelayMs(webhooks, 1, 30_000, () => 0), 30_000);
  assert.equal(retryDelayMs(webhooks, 2, 5_000, () => 0), 60_000, "never sooner than scheduled");
  assert.equal(retryDelayMs(webhooks, 1, 86_400_000, () => 0), 3_600_000, "capped at an hour");
  const defaults = loadSettings({}).webhooks;
  const schedule = [1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(defaults, n, null, () => 0));
  assert.deepEqual(schedule, [10e3, 60e3, 300e3, 1800e3, 7200e3, 21600e3, 43200e3]);
});

Deno.test("delivery: jobs a commit leased to an engine that stops before taking them are freed", () =>
  withWorkspace(
    async (s, w) => {
      const hook = receiver();
      try {
        await subscribe(s, w.admin.token, hook.url);
        const subject = await authenticate(s.ctx, w.admin.token);
        const general = w.team.general_channel_id;
        // The commit leases its job to this engine, which takes it a moment later (after the
        // answer): stopped in between, it must free it, not leave it leased for its lease's time.
        await postMessage(s.ctx, subject, general, { ok: true, value: { body: "last one" } });
        await s.engine!.stop();
        const jobs = await Array.fromAsync(s.ctx.kv.list<{ lease_until: number | null }>({
          prefix: keys.jobs(),
        }));
        assert.ok(
          jobs.every((j) => j.value.lease_until === null),
          `still leased: ${JSON.stringify(jobs.map((j) => j.value.lease_until))}`,
        );
      } finally {
        await hook.close();
      }
    },
    {},
    { engine: true },
  ));

Deno.test("delivery: a Delivery keeps the start of the receiver's answer, on the API and the screen", () =>
  withWorkspace(
    async (s, w) => {
      const long = "é".repeat(2_000);
      const hook = receiver((n) =>
        n === 0
          ? new Response("bad signature: no v1 signature matches", { status: 400 })
          : n === 1
          ? new Response(long, { status: 500 })
          : new Response(null, { status: 204 })
      );
      try {
        const sub = await subscribe(s, w.admin.token, hook.url);
        for (const [i, body] of ["one", "two", "three"].entries()) {
          await post(s, w.admin.token, w.team.general_channel_id, body);
          const n = i + 1;
          await waitUntil(async () =>
            (await show(s, w.admin.token, sub.id)).deliveries.length >= n
          );
        }
        const [ok, cut, refused] = (await show(s, w.admin.token, sub.id)).deliveries;
        assert.equal(refused.response_body, "bad signature: no v1 signature matches");
        assert.equal(new TextEncoder().encode(cut.response_body).length, 1_024, "its first 1 KiB");
        assert.equal(cut.response_body, "é".repeat(512));
        assert.equal(ok.response_body, null, "no body, nothing kept");

        const cookie = await signedInCookie(s.url, s.ctx, w.admin.user.id);
        const page = await fetch(`${s.url}/settings/integrations/webhooks/${sub.id}`, {
          headers: { Cookie: cookie },
        });
        const html = await page.text();
        assert.match(
          html,
          /HTTP 400<br\/?><span class="muted">attempt 1, next try <time[^>]*>[^<]*<\/time><\/span><br\/?><code class="muted">bad signature: no v1 signature matches/,
        );
      } finally {
        await hook.close();
      }
    },
    {},
    { engine: { sweepEveryMs: 60_000 } },
  ));

Deno.test("delivery: a subscription holds its latest 100 records at every moment, each written over the one 100 before it, with no sweep", async () => {
  const s = await startServer({
    ...FAST,
    WEBHOOKS_MAX_ATTEMPTS: "1",
    WEBHOOKS_DISABLE_AFTER: "100000",
  });
  const r = receiver(() => new Response("no", { status: 500 }));
  try {
    const w = await workspace(s.ctx);
    const sub = await subscribe(s, w.admin.token, r.url);
    const subject = await authenticate(s.ctx, w.admin.token);
    const engine = startEngine(s.ctx, { sweepEveryMs: 3_600_000 });
    try {
      let most = 0;
      for (let i = 0; i < 250; i++) {
        await postMessage(s.ctx, subject, w.team.general_channel_id, {
          ok: true,
          value: { body: `failing ${i}` },
        });
        if (i % 25 === 24) {
          await engine.idle();
          most = Math.max(most, await countKeys(s.ctx.kv, keys.deliverySlots(sub.id)));
        }
      }
      await waitUntil(() => r.hits.length >= 250, 20_000, "every attempt");
      await engine.idle();
      await waitUntil(async () => (await unsettled(s.ctx.kv)) === 0);
      const stored = await Array.fromAsync(
        s.ctx.kv.list<Delivery>({ prefix: keys.deliverySlots(sub.id) }),
        (e) => e.value,
      );
      assert.equal(stored.length, 100, "with no sweep");
      assert.equal(most, 100, "never more between commits");
      assert.equal(await countKeys(s.ctx.kv, keys.deliveries(sub.id)), 0, "none keyed by id");
      const written = (await s.ctx.kv.get<Subscription>(keys.webhook(sub.id))).value!;
      assert.equal(written.records_written, 250);
      const newest = stored.map((d) => d.id).sort().toReversed();
      const shown = await show(s, w.admin.token, sub.id);
      assert.deepEqual(shown.deliveries.map((d: Delivery) => d.id), newest.slice(0, 20));
    } finally {
      await engine.stop();
    }
  } finally {
    await s.close();
    await r.close();
  }
});
