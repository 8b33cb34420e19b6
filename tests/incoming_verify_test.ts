/**
 * Incoming webhooks that check who sends: signed as Standard Webhooks (by its npm library), GitHub
 * and Stripe (by Stripe's SDK) sign, or refused with 401, an audit entry and nothing posted; a
 * sender's repeated delivery posts once; a rotated secret keeps working for a day.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { Webhook } from "npm:standardwebhooks@1.1.1";
import Stripe from "npm:stripe@23.1.0";
import { addMemberAsOperator } from "../domain/channels/members.ts";
import { createChannel } from "../domain/channels/channels.ts";
import { createIncoming, rotateVerifySecret } from "../domain/webhooks/incoming.ts";
import type { VerifyScheme } from "../core/incoming_records.ts";
import type { Message } from "../core/types.ts";
import { listAudit } from "../kv/audit.ts";
import { keys } from "../kv/keys.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import { subjectOfPerson } from "../domain/principals.ts";
import { type TestServer, withWorkspace, type Workspace } from "./harness.ts";
import { checkResponse } from "./openapi_check.ts";

const stripe = new Stripe("sk_test_verification_only");

/** A verifying hook for the bot in a channel of its own: its URL, secret and channel. */
async function verifyingHook(s: TestServer, w: Workspace, verify: VerifyScheme) {
  const admin = await authenticate(s.ctx, w.admin.token);
  const channel = (await createChannel(s.ctx, admin, { name: verify, visibility: "public" })).id;
  await addMemberAsOperator(s.ctx, channel, w.bot.user);
  const made = await createIncoming(s.ctx, {
    channelId: channel,
    botId: w.bot.user.id,
    name: `${verify} hook`,
    verify,
  }, subjectOfPerson(w.admin.user));
  return { id: made.hook.id, url: made.url, secret: made.verify_secret!, channel };
}

async function send(url: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", ...headers },
    body,
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : null;
  checkResponse("POST", new URL(url).pathname, res.status, parsed);
  return { status: res.status, body: parsed };
}

/** The standard messages of a channel (its join notices aside). */
async function messagesIn(s: TestServer, channel: string): Promise<Message[]> {
  const out: Message[] = [];
  for await (const e of s.ctx.kv.list<Message>({ prefix: keys.timeline(channel) })) {
    if (e.value.type === "standard") out.push(e.value);
  }
  return out;
}

const refusals = async (s: TestServer, w: Workspace) =>
  (await listAudit(s.ctx.kv, w.team.id, 100)).filter((e) =>
    e.action === "incoming_webhook.signature_refused"
  ).length;

const standardHeaders = (secret: string, id: string, body: string, at = new Date()) => ({
  "webhook-id": id,
  "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
  "webhook-signature": new Webhook(secret).sign(id, at, body),
});

Deno.test("incoming verify: Standard Webhooks senders, unsigned, forged, stale and repeated", async () => {
  await withWorkspace(async (s, w) => {
    const h = await verifyingHook(s, w, "standard");
    assert.match(h.secret, /^whsec_/);
    const body = JSON.stringify({ text: "deploy 7 done" });

    const first = await send(h.url, body, standardHeaders(h.secret, "msg_1", body));
    assert.equal(first.status, 201);
    const again = await send(h.url, body, standardHeaders(h.secret, "msg_1", body));
    assert.equal(again.status, 201);
    assert.equal(
      again.body.data.id,
      first.body.data.id,
      "a repeated webhook-id answers as the first",
    );

    const old = new Date(Date.now() - 6 * 60_000);
    const refused = [
      await send(h.url, body),
      await send(h.url, body, standardHeaders(`whsec_${"A".repeat(43)}=`, "msg_2", body)),
      await send(h.url, body.replace("7", "8"), standardHeaders(h.secret, "msg_3", body)),
      await send(h.url, body, standardHeaders(h.secret, "msg_4", body, old)),
    ];
    assert.deepEqual(refused.map((r) => r.status), [401, 401, 401, 401]);
    assert.match(refused[0].body.message, /not signed/);
    assert.match(refused[3].body.message, /300 seconds/);
    assert.ok(refused.every((r) => !JSON.stringify(r.body).includes(h.secret)));
    assert.equal((await messagesIn(s, h.channel)).length, 1, "nothing else was posted");
    assert.equal(await refusals(s, w), 4);

    const { secret: next } = await rotateVerifySecret(s.ctx, h.id, subjectOfPerson(w.admin.user));
    for (const [secret, id] of [[next, "msg_5"], [h.secret, "msg_6"]]) {
      assert.equal((await send(h.url, body, standardHeaders(secret, id, body))).status, 201);
    }
  });
});

Deno.test("incoming verify: GitHub's X-Hub-Signature-256 and Stripe's Stripe-Signature, as they sign", async () => {
  await withWorkspace(async (s, w) => {
    const gh = await verifyingHook(s, w, "github");
    const body = JSON.stringify({ text: "push to main", zen: "Keep it logically awesome." });
    const githubHeaders = (secret: string, delivery: string, signed = body) => ({
      "X-GitHub-Event": "push",
      "X-GitHub-Delivery": delivery,
      "X-Hub-Signature-256": `sha256=${createHmac("sha256", secret).update(signed).digest("hex")}`,
    });
    const first = await send(gh.url, body, githubHeaders(gh.secret, "d-1"));
    assert.equal(first.status, 201);
    const again = await send(gh.url, body, githubHeaders(gh.secret, "d-1"));
    assert.equal(again.body.data.id, first.body.data.id);
    assert.equal((await send(gh.url, body, githubHeaders("wrong", "d-2"))).status, 401);
    assert.equal((await send(gh.url, body, githubHeaders(gh.secret, "d-3", "{}"))).status, 401);
    assert.equal((await messagesIn(s, gh.channel)).length, 1);

    const st = await verifyingHook(s, w, "stripe");
    const signed = async (secret: string, timestamp?: number) => ({
      "Stripe-Signature": await stripe.webhooks.generateTestHeaderStringAsync({
        payload: body,
        secret,
        ...(timestamp ? { timestamp } : {}),
      }),
    });
    assert.equal((await send(st.url, body, await signed(st.secret))).status, 201);
    const stale = Math.floor(Date.now() / 1000) - 400;
    assert.equal((await send(st.url, body, await signed(st.secret, stale))).status, 401);
    assert.equal((await send(st.url, body, await signed("whsec_wrong"))).status, 401);
    assert.equal((await messagesIn(s, st.channel)).length, 1);
    assert.equal(await refusals(s, w), 4);
  });
});

Deno.test("incoming verify: a post signed minutes ahead is remembered as long as it could be replayed", async () => {
  await withWorkspace(async (s, w) => {
    const h = await verifyingHook(s, w, "standard");
    const body = JSON.stringify({ text: "from a fast clock" });
    const ahead = new Date(Date.now() + 4 * 60_000);
    const first = await send(h.url, body, standardHeaders(h.secret, "msg_ahead", body, ahead));
    assert.equal(first.status, 201);
    // Acceptable until 5 minutes after its timestamp: 9 minutes from now, not 5.
    const seen = await s.ctx.kv.get<{ until: number }>(keys.incomingSeen(h.id, "msg_ahead"));
    assert.ok(seen.value!.until >= ahead.getTime() + 5 * 60_000, JSON.stringify(seen.value));
    const tooFar = new Date(Date.now() + 6 * 60_000);
    const refused = await send(h.url, body, standardHeaders(h.secret, "msg_far", body, tooFar));
    assert.equal(refused.status, 401);
    assert.match(refused.body.message, /300 seconds/);
  });
});
