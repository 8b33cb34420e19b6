/**
 * A webhook receiver for this service, in Deno: verifies X-Service-Signature over the raw body,
 * refuses stale timestamps, and handles each event id once. docs/verifying-webhooks.md shows
 * this file.
 *
 *   WEBHOOK_SECRET=whsec_... deno run --allow-net --allow-env --allow-read --allow-write \
 *     --unstable-kv examples/receiver.ts
 *
 * It listens on 127.0.0.1, port RECEIVER_PORT (8000 unless set).
 */
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

/** The signing secret, or one line saying what to set, and exit. */
function signingSecret(): string {
  const secret = Deno.env.get("WEBHOOK_SECRET") ?? "";
  if (/^whsec_[0-9A-Za-z+/=]{16,}$/.test(secret)) return secret;
  console.error(
    secret
      ? "WEBHOOK_SECRET is not a signing secret: set it to the subscription's secret, whsec_ and then its key."
      : "WEBHOOK_SECRET is not set: set it to the subscription's signing secret (whsec_...), as creating it printed.",
  );
  Deno.exit(1);
}

/** Your code: what an event should do (it may be async). Keep it well under WEBHOOKS_TIMEOUT. */
function handle(event: { id: string; type: string; data: unknown }): void | Promise<void> {
  console.log(`${event.type} ${event.id}`, JSON.stringify(event.data));
}

const key = await importSecret(signingSecret());
// Event ids handled so far, in ./data beside the service's own store (git ignores it).
const seenPath = Deno.env.get("SEEN_KV_PATH") ?? "./data/receiver-seen.sqlite3";
await Deno.mkdir(seenPath.replace(/[^/]*$/, "") || ".", { recursive: true });
const seen = await Deno.openKv(seenPath);
const port = Number(Deno.env.get("RECEIVER_PORT") ?? 8000);

Deno.serve({ hostname: "127.0.0.1", port }, async (req) => {
  // Deliveries are POSTs; anything else (a readiness probe's GET) is answered, not refused.
  if (req.method !== "POST") return new Response("ready\n", { status: 200 });
  const raw = await req.text();
  const problem = await signatureProblem(key, req.headers.get("X-Service-Signature"), raw);
  if (problem) {
    console.error(`refused a delivery: ${problem}`);
    return new Response(problem, { status: 400 });
  }
  const event = JSON.parse(raw);
  // At least once: handle each event id once; a repeat is acknowledged and ignored.
  const mark = ["webhook_events", event.id];
  const first = await seen.atomic()
    .check({ key: mark, versionstamp: null })
    .set(mark, true, { expireIn: 7 * 24 * 3_600_000 })
    .commit();
  if (first.ok) {
    try {
      await handle(event);
    } catch (e) {
      await seen.delete(mark); // let the retry try again
      throw e;
    }
  }
  return new Response(null, { status: 204 });
});
