/**
 * A receiver written the way the README tells integrators to write one (a Stripe-style
 * verifier: split the header on ",", take `t` and every `v1`, HMAC over `${t}.${rawBody}`,
 * constant-time compare through crypto.subtle.verify, 300 s tolerance, de-duplicate on the
 * envelope `id`) accepts real deliveries unchanged.
 */
import assert from "node:assert/strict";
import { rotateWebhookSecret } from "../domain/webhooks/admin.ts";
import { api, startServer, workspace } from "./harness.ts";
import { post, show, sleep, subscribe, waitUntil } from "./webhook_receivers.ts";
import { subjectOfPerson } from "../domain/principals.ts";

// ---- The README's verifier, verbatim ----------------------------------------------------
const TOLERANCE_SECONDS = 300;
const encoder = new TextEncoder();

/** The HMAC key of a signing secret: the whole `whsec_...` string. */
function importSecret(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-f]{64}$/.test(hex)) return null;
  return Uint8Array.from(hex.match(/../g)!, (byte) => parseInt(byte, 16));
}

/**
 * Why `header` (X-Service-Signature) does not carry a valid v1 signature of `rawBody` made
 * within TOLERANCE_SECONDS of `nowMs`, or null when it does. Any one v1 may match: during a
 * secret rotation there are two, one per secret.
 */
async function signatureProblem(
  key: CryptoKey,
  header: string | null,
  rawBody: string,
  nowMs = Date.now(),
): Promise<string | null> {
  if (!header) return "no X-Service-Signature header";
  let timestamp: string | undefined;
  const candidates: string[] = [];
  for (const part of header.split(",")) {
    const [name, value] = part.split("=", 2);
    if (name === "t") timestamp = value;
    if (name === "v1" && value) candidates.push(value);
  }
  if (!timestamp || !/^\d+$/.test(timestamp)) return "the signature header has no t= timestamp";
  const age = Math.round(nowMs / 1000 - Number(timestamp));
  if (Math.abs(age) > TOLERANCE_SECONDS) {
    return `the signature is ${age} s old, more than ${TOLERANCE_SECONDS} s: a replay, or a clock off`;
  }
  const signed = encoder.encode(`${timestamp}.${rawBody}`);
  for (const hex of candidates) {
    const mac = hexToBytes(hex);
    if (mac && await crypto.subtle.verify("HMAC", key, mac, signed)) return null;
  }
  return "no v1 signature matches: WEBHOOK_SECRET is not this subscription's, or the body changed";
}

// ------------------------------------------------------------------------------------------

const verifySignature = async (...args: Parameters<typeof signatureProblem>) =>
  (await signatureProblem(...args)) === null;

interface Received {
  signature: string | null;
  raw: string;
  accepted: boolean;
}

/** A receiver like the README's: verify the raw body first, then handle each event id once. */
function readmeReceiver(secrets: () => Promise<CryptoKey>) {
  const handled = new Map<string, unknown>();
  const log: Received[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const raw = await req.text();
    const signature = req.headers.get("X-Service-Signature");
    const accepted = await verifySignature(await secrets(), signature, raw);
    log.push({ signature, raw, accepted });
    if (!accepted) return new Response("bad signature", { status: 400 });
    const event = JSON.parse(raw);
    if (!handled.has(event.id)) handled.set(event.id, event);
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/webhooks`,
    handled,
    log,
    close: () => server.shutdown(),
  };
}

Deno.test("receiver: the README verifier accepts real deliveries and de-duplicates", async () => {
  const s = await startServer({ WEBHOOKS_BACKOFF: "100ms" }, { engine: true });
  let secret = "";
  const r = readmeReceiver(() => importSecret(secret));
  try {
    const w = await workspace(s.ctx);
    const sub = await subscribe(s, w.admin.token, r.url, {
      events: ["message.created", "message.updated", "reaction.added"],
    });
    secret = sub.secret;
    const m = await post(s, w.admin.token, w.team.general_channel_id, 'héllo \u{1F600} "quoted"');
    await api(s, "PATCH", `/channels/${w.team.general_channel_id}/messages/${m.id}`, {
      token: w.admin.token,
      body: { body: "edited <b>&amp;</b>" },
    });
    await api(
      s,
      "PUT",
      `/channels/${w.team.general_channel_id}/messages/${m.id}/reactions/%F0%9F%8E%89`,
      {
        token: w.member.token,
      },
    );
    await waitUntil(() => r.log.length >= 3);
    assert.ok(r.log.every((x) => x.accepted), JSON.stringify(r.log));
    assert.equal(r.handled.size, 3);

    await waitUntil(async () => (await show(s, w.admin.token, sub.id)).deliveries.length === 3);
    const [latest] = (await show(s, w.admin.token, sub.id)).deliveries;
    const again = await api(s, "POST", `/webhooks/${sub.id}/deliveries/${latest.id}/redeliver`, {
      token: w.admin.token,
    });
    assert.equal(again.status, 202);
    await waitUntil(() => r.log.length === 4);
    assert.equal(r.log[3].accepted, true);
    assert.equal(r.handled.size, 3, "the redelivered event is recognised by its id");

    // Events of one subscription may arrive in any order: this is the created message's.
    const delivered = r.log.find((x) => x.raw.includes("é"))!;
    const key = await importSecret(secret);
    assert.equal(await verifySignature(key, delivered.signature, delivered.raw + " "), false);
    assert.equal(
      await verifySignature(key, delivered.signature, delivered.raw.replace("é", "e")),
      false,
    );
    assert.equal(
      await verifySignature(await importSecret(secret + "x"), delivered.signature, delivered.raw),
      false,
    );
    const t = Number(/t=(\d+)/.exec(delivered.signature!)![1]);
    assert.equal(
      await verifySignature(key, delivered.signature, delivered.raw, (t + 299) * 1000),
      true,
    );
    assert.equal(
      await verifySignature(key, delivered.signature, delivered.raw, (t + 301) * 1000),
      false,
    );
    assert.equal(
      await verifySignature(key, delivered.signature, delivered.raw, (t - 301) * 1000),
      false,
    );
    const reordered = delivered.signature!.split(",").reverse().join(",");
    assert.equal(await verifySignature(key, reordered, delivered.raw), true);
    assert.equal(await verifySignature(key, null, delivered.raw), false);
  } finally {
    await s.close();
    await r.close();
  }
});

Deno.test("receiver: during a rotation the old and the new secret both verify", async () => {
  const s = await startServer({}, { engine: true });
  let secret = "";
  const r = readmeReceiver(() => importSecret(secret));
  try {
    const w = await workspace(s.ctx);
    const sub = await subscribe(s, w.admin.token, r.url);
    const rotated = await rotateWebhookSecret(s.ctx, sub.id, subjectOfPerson(w.admin.user));
    secret = sub.secret;
    await post(s, w.admin.token, w.team.general_channel_id, "old key still works");
    await waitUntil(() => r.log.length === 1);
    secret = rotated.secret;
    await post(s, w.admin.token, w.team.general_channel_id, "new key works");
    await waitUntil(() => r.log.length === 2);
    await sleep(50);
    assert.deepEqual(r.log.map((x) => x.accepted), [true, true]);
    for (const x of r.log) assert.equal(x.signature!.split(",").length, 3);
  } finally {
    await s.close();
    await r.close();
  }
});
