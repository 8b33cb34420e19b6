/**
 * A webhook receiver for this service, in Deno: verifies X-Service-Signature over the raw body,
 * refuses stale timestamps, and handles each event id once. The README shows this file.
 *
 *   WEBHOOK_SECRET=whsec_... deno run --allow-net --allow-env --allow-read --allow-write \
 *     --unstable-kv examples/receiver.ts
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
 * True when `header` (X-Service-Signature) carries a valid v1 signature of `rawBody` made
 * within TOLERANCE_SECONDS of `nowMs`. Any one v1 may match: during a secret rotation there
 * are two, one per secret.
 */
async function verifySignature(
  key: CryptoKey,
  header: string | null,
  rawBody: string,
  nowMs = Date.now(),
): Promise<boolean> {
  let timestamp: string | undefined;
  const candidates: string[] = [];
  for (const part of (header ?? "").split(",")) {
    const [name, value] = part.split("=", 2);
    if (name === "t") timestamp = value;
    if (name === "v1" && value) candidates.push(value);
  }
  if (!timestamp || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const signed = encoder.encode(`${timestamp}.${rawBody}`);
  for (const hex of candidates) {
    const mac = hexToBytes(hex);
    if (mac && await crypto.subtle.verify("HMAC", key, mac, signed)) return true;
  }
  return false;
}

/** Your code: what an event should do (it may be async). Keep it well under WEBHOOKS_TIMEOUT. */
function handle(event: { id: string; type: string; data: unknown }): void | Promise<void> {
  console.log(`${event.type} ${event.id}`, JSON.stringify(event.data));
}

const key = await importSecret(Deno.env.get("WEBHOOK_SECRET")!);
// Event ids handled so far, in ./data beside the service's own store (git ignores it).
const seenPath = Deno.env.get("SEEN_KV_PATH") ?? "./data/receiver-seen.sqlite3";
await Deno.mkdir(seenPath.replace(/[^/]*$/, "") || ".", { recursive: true });
const seen = await Deno.openKv(seenPath);
const port = Number(Deno.env.get("PORT") ?? 8000);

Deno.serve({ hostname: "127.0.0.1", port }, async (req) => {
  const raw = await req.text();
  if (!await verifySignature(key, req.headers.get("X-Service-Signature"), raw)) {
    return new Response("bad signature", { status: 400 });
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
