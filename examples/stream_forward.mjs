// @ts-check
/**
 * Receive real events on localhost, behind any firewall: follows the live event stream
 * (GET /api/v1/events/stream) and forwards each event as a signed webhook POST to a local URL,
 * like `stripe listen --forward-to`. Your receiver verifies it with the very code it will run in
 * production. A dropped connection resumes from the last event forwarded, so nothing is missed
 * or sent twice; an event your receiver refuses is retried until it takes it.
 *
 * Runs on Deno or Node 20+, with no packages. docs/webhooks.md shows the two commands:
 *
 *   TOKEN=tcp_... deno run --allow-net --allow-env examples/stream_forward.mjs \
 *     --forward-to http://127.0.0.1:8000/
 *   TOKEN=tcp_... node examples/stream_forward.mjs --forward-to http://127.0.0.1:8000/
 *
 * Options: --url (the service; default TEAM_CHAT_URL or http://localhost:8080), --types and
 * --channel-ids (comma-separated, as the stream takes them), --after (an event id to start
 * after; default: from now). WEBHOOK_SECRET is the `whsec_...` secret it signs with; without
 * one, it makes one and prints it for your receiver.
 */
import process from "node:process";
import { parseArgs } from "node:util";

const { values: options } = parseArgs({
  args: process.argv.slice(2),
  options: {
    "forward-to": { type: "string" },
    url: { type: "string", default: process.env.TEAM_CHAT_URL ?? "http://localhost:8080" },
    types: { type: "string" },
    "channel-ids": { type: "string" },
    after: { type: "string" },
  },
});
const token = process.env.TOKEN;
const target = options["forward-to"] ?? "";
if (!token || !target) {
  console.error("usage: TOKEN=tcp_... stream_forward.mjs --forward-to http://127.0.0.1:8000/");
  process.exit(2);
}

const encoder = new TextEncoder();
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const mintSecret = () =>
  "whsec_" + Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => BASE62[b % 62]).join("");
const secret = process.env.WEBHOOK_SECRET ?? mintSecret();
if (!process.env.WEBHOOK_SECRET) {
  console.log(`Signing with a new secret; give it to your receiver:\n  WEBHOOK_SECRET=${secret}`);
}

/** @param {Uint8Array<ArrayBuffer>} key */
const hmacKey = (key) =>
  crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
// X-Service-Signature is keyed by the whole secret; Standard Webhooks by the base64 after whsec_.
const serviceKey = await hmacKey(encoder.encode(secret));
const standardKey = await hmacKey(
  Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0)),
);

/** @param {CryptoKey} key @param {string} text */
const mac = async (key, text) =>
  new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(text)));
/** @param {Uint8Array} bytes */
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
/** @param {Uint8Array} bytes */
const base64 = (bytes) => btoa(String.fromCharCode(...bytes));

/** The headers the service's own deliveries carry, signed now with `secret`. */
async function signedHeaders(
  /** @type {string} */ id,
  /** @type {string} */ type,
  /** @type {string} */ body,
) {
  const t = Math.floor(Date.now() / 1000);
  return {
    "Content-Type": "application/json",
    "User-Agent": "TeamChat-StreamForward/1",
    "X-Service-Event": type,
    "X-Service-Delivery": id,
    "X-Service-Signature": `t=${t},v1=${hex(await mac(serviceKey, `${t}.${body}`))}`,
    "webhook-id": id,
    "webhook-timestamp": String(t),
    "webhook-signature": `v1,${base64(await mac(standardKey, `${id}.${t}.${body}`))}`,
  };
}

const sleep = (/** @type {number} */ ms) => new Promise((done) => setTimeout(done, ms));

/** POSTs one event until the receiver answers 2xx, waiting longer after each refusal. */
async function forward(/** @type {string} */ type, /** @type {string} */ body) {
  const { id } = JSON.parse(body);
  for (let wait = 1000;; wait = Math.min(wait * 2, 30_000)) {
    try {
      const res = await fetch(target, {
        method: "POST",
        headers: await signedHeaders(id, type, body),
        body,
      });
      await res.body?.cancel();
      console.log(`${new Date().toISOString()} ${type} ${id} → ${res.status}`);
      if (res.ok) return;
    } catch (e) {
      console.log(
        `${new Date().toISOString()} ${type} ${id} → ${e instanceof Error ? e.message : e}`,
      );
    }
    await sleep(wait);
  }
}

/**
 * Reads one connection's Server-Sent Events, forwarding each event in turn; returns the
 * `retry:` the service asked for. `lastId` moves only once an event is forwarded.
 * @param {ReadableStream<Uint8Array>} body
 * @param {{ lastId: string | null, retry: number }} state
 */
async function follow(body, state) {
  let buffer = "";
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    buffer += chunk.replaceAll("\r\n", "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      /** @type {Record<string, string>} */
      const fields = {};
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        fields[name] = name === "data" && fields.data !== undefined
          ? `${fields.data}\n${value}`
          : value;
      }
      if (fields.retry && /^\d+$/.test(fields.retry)) state.retry = Number(fields.retry);
      if (fields.data === undefined) continue;
      await forward(fields.event ?? "message", fields.data);
      if (fields.id) state.lastId = fields.id;
    }
  }
}

const query = new URLSearchParams();
if (options.types) query.set("types", options.types);
if (options["channel-ids"]) query.set("channel_ids", options["channel-ids"]);
const streamUrl = `${options.url.replace(/\/+$/, "")}/api/v1/events/stream?${query}`;
/** @type {{ lastId: string | null, retry: number }} */
const state = { lastId: options.after ?? null, retry: 1000 };

console.log(`Forwarding events from ${options.url} to ${target}`);
for (let failures = 0;; failures++) {
  try {
    /** @type {Record<string, string>} */
    const headers = { Authorization: `Bearer ${token}`, Accept: "text/event-stream" };
    if (state.lastId) headers["Last-Event-ID"] = state.lastId;
    const res = await fetch(streamUrl, { headers });
    if (res.status === 200 && res.body) {
      console.log(`Connected${state.lastId ? `, resuming after ${state.lastId}` : ""}`);
      failures = 0;
      await follow(res.body, state);
      console.log("The stream ended; reconnecting");
    } else {
      const text = await res.text();
      console.log(`The service answered ${res.status}: ${text}`);
      // Only waiting helps a 429 or a 5xx; anything else needs the command changed.
      if (res.status !== 429 && res.status < 500) process.exit(1);
      const after = Number(res.headers.get("Retry-After"));
      if (after > 0) await sleep(after * 1000);
    }
  } catch (e) {
    console.log(`The connection dropped (${e instanceof Error ? e.message : e}); reconnecting`);
  }
  await sleep(Math.min(state.retry * 2 ** Math.min(failures, 5), 30_000));
}
