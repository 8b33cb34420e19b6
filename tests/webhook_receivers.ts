/** Real webhook receivers on loopback, and small helpers the webhook tests share. */
import assert from "node:assert/strict";
import { api, type TestServer } from "./harness.ts";
import { deliveryFaults } from "./event_schema_check.ts";

/** Settings that make retries and timeouts quick enough for a test. */
export const FAST = { WEBHOOKS_BACKOFF: "100ms,200ms", WEBHOOKS_TIMEOUT: "0.5" };

export interface Hit {
  headers: Headers;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  hits: Hit[];
  /** Resolves once `n` requests arrived; fails the test after `timeoutMs`. */
  waitFor(n: number, timeoutMs?: number): Promise<Hit[]>;
  /** Stops it; fails if a webhook delivery it got did not match its type's catalog schema. */
  close(): Promise<void>;
}

/**
 * A `Deno.serve` receiver on 127.0.0.1. `answer` gets the 0-based number of the request and
 * returns the response (default 200 "ok").
 */
export function receiver(
  answer: (n: number, req: Request) => Response | Promise<Response> = () => new Response("ok"),
): Receiver {
  const hits: Hit[] = [];
  const faults: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const hit = { headers: req.headers, body: await req.text(), at: Date.now() };
    const fault = req.headers.has("x-service-event") ? deliveryFaults(hit.body) : null;
    if (fault) faults.push(fault);
    const n = hits.push(hit) - 1;
    return await answer(n, req);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    hits,
    waitFor: (n, timeoutMs = 5_000) =>
      waitUntil(() => hits.length >= n, timeoutMs, () => `${n} deliveries (got ${hits.length})`)
        .then(() => hits),
    close: async () => {
      await server.shutdown();
      assert.deepEqual(faults, [], "every delivery matches its type's schema in the catalog");
    },
  };
}

/** A raw TCP listener for receivers that misbehave below HTTP. */
export function rawReceiver(onConn: (conn: Deno.Conn) => Promise<void> | void) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const served: Promise<void>[] = [];
  let accepted = 0;
  (async () => {
    try {
      for await (const conn of listener) {
        accepted++;
        conns.add(conn);
        served.push(Promise.resolve(onConn(conn)).catch(() => {}));
      }
    } catch {
      // closed
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/hook`,
    accepted: () => accepted,
    async close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
      await Promise.allSettled(served);
    },
  };
}

/** Reads a request head and body (Content-Length) off a raw connection. */
export async function readRequest(conn: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(64 * 1024);
  let used = 0;
  const dec = new TextDecoder();
  while (used < buf.length) {
    const n = await conn.read(buf.subarray(used));
    if (n === null) break;
    used += n;
    const text = dec.decode(buf.subarray(0, used));
    const end = text.indexOf("\r\n\r\n");
    const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0);
    if (end >= 0 && used >= end + 4 + length) return text;
  }
  return dec.decode(buf.subarray(0, used));
}

/** `what` names the condition; as a function, it is asked at the timeout, to say how things stand. */
export async function waitUntil(
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  what: string | (() => string) = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    }
    await sleep(10);
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Creates a subscription over the API; returns its id and secret. */
export async function subscribe(
  s: TestServer,
  token: string,
  url: string,
  opts: {
    events?: string[];
    channel_ids?: string[] | null;
    name?: string;
    signature_scheme?: "service" | "standard" | "both";
  } = {},
): Promise<{ id: string; secret: string }> {
  const res = await api(s, "POST", "/webhooks", {
    token,
    body: {
      name: opts.name ?? "hook",
      url,
      events: opts.events ?? ["message.created"],
      channel_ids: opts.channel_ids,
      signature_scheme: opts.signature_scheme,
    },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { id: res.body.data.id, secret: res.body.secret };
}

/** Posts a message over the API; returns it. */
export async function post(s: TestServer, token: string, channelId: string, body: string) {
  const res = await api(s, "POST", `/channels/${channelId}/messages`, { token, body: { body } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

/**
 * Posts a message over HTTP to the service at `baseUrl` and adds the answer's status to
 * `statuses`: for load, where refusals are counted rather than failing the test.
 */
export async function postCounted(
  baseUrl: string,
  token: string,
  channelId: string,
  body: string,
  statuses: Map<number, number>,
): Promise<void> {
  const res = await fetch(`${baseUrl}/api/v1/channels/${channelId}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ body }),
  });
  await res.body?.cancel();
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
}

/** The subscription with its deliveries, over the API. */
export async function show(s: TestServer, token: string, id: string) {
  const res = await api(s, "GET", `/webhooks/${id}`, { token });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

/** The lowercase hex HMAC-SHA256 of `<t>.<body>` under `secret`. */
export async function hmacHex(secret: string, t: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(`${t}.${body}`))).toHex();
}
