/**
 * A subscription chooses how its deliveries are signed: `service` (X-Service-Signature, the
 * default), `standard` (Standard Webhooks, verified here by its own npm library, unchanged) or
 * `both`; subscriptions made before the choice existed keep getting both.
 */
import assert from "node:assert/strict";
import { Webhook } from "npm:standardwebhooks@1.1.1";
import { standardSignature } from "../delivery/sign.ts";
import { Signer } from "../core/signer.ts";
import { keys } from "../kv/keys.ts";
import type { Subscription } from "../core/webhook_records.ts";
import { webhookCommands } from "../cli/webhook_commands.ts";
import { AppSender } from "../delivery/apps/sender.ts";
import { api, assertStatus, withWorkspace } from "./harness.ts";
import { FAST, type Hit, post, receiver, subscribe } from "./webhook_receivers.ts";

const verifyStandard = (hit: Hit, secret: string) =>
  new Webhook(secret).verify(hit.body, {
    "webhook-id": hit.headers.get("webhook-id")!,
    "webhook-timestamp": hit.headers.get("webhook-timestamp")!,
    "webhook-signature": hit.headers.get("webhook-signature")!,
  });

const signedWith = (hit: Hit) => ({
  service: hit.headers.has("x-service-signature"),
  standard: ["webhook-id", "webhook-timestamp", "webhook-signature"].every((h) =>
    hit.headers.has(h)
  ),
});

/** A command's notes to the operator, which these tests do not read. */
const ignoreNotes = () => {};

Deno.test("signature schemes: the Standard Webhooks specification's own test vector", () => {
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const [id, t, body] = ["msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}'];
  const signature = standardSignature([new Signer(secret)], id, t, body);
  assert.equal(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  const headers = {
    "webhook-id": id,
    "webhook-timestamp": String(t),
    "webhook-signature": signature,
  };
  assert.throws(
    () => new Webhook(secret).verify(body, headers),
    /timestamp/i,
    "too old, as it should be",
  );
});

Deno.test("signature schemes: service by default, standard or both as chosen, each verified", async () => {
  let failFirst = true;
  const r = receiver(() => {
    if (!failFirst) return new Response("ok");
    failFirst = false;
    return new Response("try again", { status: 500 });
  });
  await withWorkspace(
    async (s, w) => {
      const general = w.team.general_channel_id;
      const made = await api(s, "POST", "/webhooks", {
        token: w.admin.token,
        body: { name: "default", url: r.url, events: ["message.created"] },
      });
      assertStatus(made, 201);
      assert.equal(made.body.data.signature_scheme, "service");
      const service = { id: made.body.data.id, secret: made.body.secret };

      // The first attempt fails and is retried: the same webhook-id, as the specification wants.
      await api(s, "PATCH", `/webhooks/${service.id}`, {
        token: w.admin.token,
        body: { signature_scheme: "standard" },
      }).then((res) => assert.equal(res.body.data.signature_scheme, "standard"));
      const message = await post(s, w.admin.token, general, "standard, retried");
      const [first, retry] = await r.waitFor(2);
      for (const hit of [first, retry]) {
        assert.deepEqual(signedWith(hit), { service: false, standard: true });
        assert.equal(hit.headers.get("webhook-id"), JSON.parse(hit.body).id);
        assert.equal(
          (verifyStandard(hit, service.secret) as { data: { id: string } }).data.id,
          message.id,
        );
      }
      assert.equal(first.headers.get("webhook-id"), retry.headers.get("webhook-id"));

      const both = await subscribe(s, w.admin.token, r.url, { signature_scheme: "both" });
      await api(s, "PATCH", `/webhooks/${service.id}`, {
        token: w.admin.token,
        body: { signature_scheme: "service" },
      });
      await post(s, w.admin.token, general, "one of each");
      const hits = (await r.waitFor(4)).slice(2);
      const by = (secret: string) =>
        hits.find((h) => {
          try {
            return h.headers.has("webhook-signature") && verifyStandard(h, secret);
          } catch {
            return false;
          }
        });
      const bothHit = by(both.secret)!;
      assert.deepEqual(signedWith(bothHit), { service: true, standard: true });
      const serviceHit = hits.find((h) => h !== bothHit)!;
      assert.deepEqual(signedWith(serviceHit), { service: true, standard: false });
    },
    FAST,
    { engine: true },
  ).finally(() => r.close());
});

Deno.test("signature schemes: an unknown scheme is refused naming the choices; the CLI and old subscriptions", async () => {
  await withWorkspace(async (s, w) => {
    const body = { name: "x", url: "http://127.0.0.1:9/hook", events: ["message.created"] };
    const refused = await api(s, "POST", "/webhooks", {
      token: w.admin.token,
      body: { ...body, signature_scheme: "svix" },
    });
    assertStatus(refused, 422);
    assert.match(JSON.stringify(refused.body), /signature_scheme/);
    assert.match(JSON.stringify(refused.body), /service, standard, both/);
    const made = await api(s, "POST", "/webhooks", { token: w.admin.token, body });
    const id = made.body.data.id;
    const patched = await api(s, "PATCH", `/webhooks/${id}`, {
      token: w.admin.token,
      body: { signature_scheme: "STANDARD" },
    });
    assertStatus(patched, 422);
    assert.match(JSON.stringify(patched.body), /service, standard, both/);

    const run = webhookCommands["webhook:signature-scheme"].run;
    const view = await run(s.ctx, { id, scheme: "both" }, new AppSender(), ignoreNotes) as {
      signature_scheme: string;
    };
    assert.equal(view.signature_scheme, "both");
    await assert.rejects(
      run(s.ctx, { id, scheme: "hmac" }, new AppSender(), ignoreNotes),
      /service, standard, both/,
    );

    // A subscription stored before the choice existed: shown and signed as both, as it was sent.
    const entry = await s.ctx.kv.get<Subscription>(keys.webhook(id));
    const { signature_scheme: _, ...old } = entry.value!;
    await s.ctx.kv.set(keys.webhook(id), old);
    const shown = await api(s, "GET", `/webhooks/${id}`, { token: w.admin.token });
    assert.equal(shown.body.data.signature_scheme, "both");
  }, { WEBHOOKS_ALLOW_PRIVATE_URLS: "true" });
});
