/**
 * Receivers verify real deliveries with off-the-shelf libraries, unchanged: the Standard Webhooks
 * library (webhook-* headers) and Stripe's SDK (X-Service-Signature has Stripe's format), also
 * across a secret rotation, when every delivery is signed with both secrets.
 */
import assert from "node:assert/strict";
import { Webhook } from "npm:standardwebhooks@1.1.1";
import Stripe from "npm:stripe@23.1.0";
import { rotateWebhookSecret } from "../domain/webhooks/admin.ts";
import { withWorkspace } from "./harness.ts";
import { FAST, type Hit, post, receiver, subscribe } from "./webhook_receivers.ts";
import { subjectOfPerson } from "../domain/principals.ts";

const stripe = new Stripe("sk_test_verification_only");
const cryptoProvider = Stripe.createSubtleCryptoProvider();

function verifyStandard(hit: Hit, secret: string) {
  return new Webhook(secret).verify(hit.body, {
    "webhook-id": hit.headers.get("webhook-id")!,
    "webhook-timestamp": hit.headers.get("webhook-timestamp")!,
    "webhook-signature": hit.headers.get("webhook-signature")!,
  });
}

async function verifyStripe(hit: Hit, secret: string) {
  return await stripe.webhooks.constructEventAsync(
    hit.body,
    hit.headers.get("x-service-signature")!,
    secret,
    300,
    cryptoProvider,
  );
}

Deno.test("verifiers: Standard Webhooks and Stripe libraries accept real deliveries of a subscription signed both ways, also mid-rotation", async () => {
  const r = receiver();
  await withWorkspace(
    async (s, w) => {
      const sub = await subscribe(s, w.admin.token, r.url, { signature_scheme: "both" });
      await post(s, w.admin.token, w.team.general_channel_id, "before the rotation");
      const [before] = await r.waitFor(1);
      assert.equal(before.headers.get("webhook-id"), JSON.parse(before.body).id);
      assert.match(before.headers.get("webhook-signature")!, /^v1,[A-Za-z0-9+/]+=*$/);
      assert.deepEqual(verifyStandard(before, sub.secret), JSON.parse(before.body));
      assert.equal((await verifyStripe(before, sub.secret)).id, JSON.parse(before.body).id);

      const { secret: next } = await rotateWebhookSecret(
        s.ctx,
        sub.id,
        subjectOfPerson(w.admin.user),
      );
      await post(s, w.admin.token, w.team.general_channel_id, "during the rotation");
      const during = (await r.waitFor(2))[1];
      assert.equal(during.headers.get("webhook-signature")!.split(" ").length, 2);
      for (const secret of [next, sub.secret]) {
        assert.deepEqual(verifyStandard(during, secret), JSON.parse(during.body));
        assert.equal((await verifyStripe(during, secret)).id, JSON.parse(during.body).id);
      }
      assert.throws(() => verifyStandard(during, `whsec_${"A".repeat(32)}`));
      await assert.rejects(verifyStripe(during, `whsec_${"A".repeat(32)}`));
    },
    FAST,
    { engine: true },
  ).finally(() => r.close());
});
