/**
 * Faults the delivery engine must survive: misbehaving receivers (real ones, on loopback), and
 * the service itself killed with SIGKILL mid-way (main.ts in a subprocess on a KV file).
 */
import assert from "node:assert/strict";
import { postMessage } from "../domain/messages/messages.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import type { Delivery } from "../core/webhook_records.ts";
import { keys } from "../kv/keys.ts";
import {
  countKeys,
  type TestServer,
  unsettled,
  withWorkspace,
  type Workspace,
  workspace,
} from "./harness.ts";
import {
  FAST,
  type Hit,
  post,
  rawReceiver,
  readRequest,
  receiver,
  show,
  sleep,
  subscribe,
  waitUntil,
} from "./webhook_receivers.ts";
import { freePort, type Service, sharedStore, startService } from "./processes.ts";
import type { Store } from "../kv/store/store.ts";

const withEngine = (fn: (s: TestServer, w: Workspace) => Promise<void>) =>
  withWorkspace(fn, FAST, { engine: true });
const enc = new TextEncoder();
const OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

/** Posts one message to a fresh subscription; waits for two recorded attempts; newest first. */
async function twoAttempts(s: TestServer, w: Workspace, url: string): Promise<Delivery[]> {
  const sub = await subscribe(s, w.admin.token, url);
  await post(s, w.admin.token, w.team.general_channel_id, "fault");
  await waitUntil(
    async () => (await show(s, w.admin.token, sub.id)).deliveries.length >= 2,
    5_000,
    "two attempts",
  );
  const shown = await show(s, w.admin.token, sub.id);
  assert.equal(shown.deliveries.length, 2);
  assert.equal(shown.consecutive_failures, 0);
  return shown.deliveries;
}

function assertFailed(d: Delivery, status: number | null, error: RegExp) {
  assert.equal(d.succeeded, false);
  assert.equal(d.response_status, status);
  assert.match(d.error ?? "", error);
}

function assertSucceeded(d: Delivery) {
  assert.equal(d.succeeded, true, JSON.stringify(d));
  assert.equal(d.response_status, 200);
  assert.equal(d.error, null);
}

Deno.test("faults: receiver answers 500, then recovers", async () => {
  const r = receiver((n) => new Response("oops", { status: n === 0 ? 500 : 200 }));
  await withEngine(async (s, w) => {
    const [ok, failed] = await twoAttempts(s, w, r.url);
    assertFailed(failed, 500, /^HTTP 500$/);
    assertSucceeded(ok);
  }).finally(() => r.close());
});

Deno.test("faults: 429 with Retry-After is waited out", async () => {
  const r = receiver((n) =>
    n === 0
      ? new Response("slow down", { status: 429, headers: { "Retry-After": "1" } })
      : new Response("ok")
  );
  await withEngine(async (s, w) => {
    const [ok, failed] = await twoAttempts(s, w, r.url);
    assertFailed(failed, 429, /429/);
    assertSucceeded(ok);
    const gap = r.hits[1].at - r.hits[0].at;
    assert.ok(gap >= 990, `Retry-After: 1 beats the 100 ms backoff (waited ${gap} ms)`);
  }).finally(() => r.close());
});

Deno.test("faults: a 302 is a failure and is never followed", async () => {
  const elsewhere = receiver();
  const r = receiver((n) =>
    n === 0
      ? new Response(null, { status: 302, headers: { Location: elsewhere.url } })
      : new Response("ok")
  );
  await withEngine(async (s, w) => {
    const [ok, failed] = await twoAttempts(s, w, r.url);
    assertFailed(failed, 302, /redirect/);
    assertSucceeded(ok);
    assert.equal(elsewhere.hits.length, 0);
  }).finally(() => Promise.all([r.close(), elsewhere.close()]));
});

Deno.test("faults: a response body of gigabytes is not read", async () => {
  let produced = 0;
  const chunk = new Uint8Array(1 << 20);
  const r = receiver(() =>
    new Response(
      new ReadableStream({
        pull(controller) {
          if (produced >= 8 * 2 ** 30) return controller.close();
          produced += chunk.length;
          controller.enqueue(chunk);
        },
      }),
      { headers: { "Content-Length": String(8 * 2 ** 30) } },
    )
  );
  await withEngine(async (s, w) => {
    const sub = await subscribe(s, w.admin.token, r.url);
    const before = Deno.memoryUsage().rss;
    await post(s, w.admin.token, w.team.general_channel_id, "huge answer");
    await waitUntil(async () => (await show(s, w.admin.token, sub.id)).deliveries.length === 1);
    const [d] = (await show(s, w.admin.token, sub.id)).deliveries;
    assertSucceeded(d);
    assert.ok(produced < 64 * 2 ** 20, `the receiver only got to send ${produced} bytes`);
    assert.ok(Deno.memoryUsage().rss - before < 256 * 2 ** 20, "nothing big was buffered");
  }).finally(() => r.close());
});

Deno.test("faults: a receiver that never answers times out", async () => {
  let n = 0;
  const r = rawReceiver(async (conn) => {
    await readRequest(conn);
    if (n++ === 0) return; // hold the connection open, say nothing
    await conn.write(enc.encode(OK));
    conn.close();
  });
  await withEngine(async (s, w) => {
    const started = Date.now();
    const [ok, failed] = await twoAttempts(s, w, r.url);
    assertFailed(failed, null, /timed out after 0.5s/);
    assertSucceeded(ok);
    assert.ok(Date.now() - started < 3_000);
  }).finally(() => r.close());
});

Deno.test("faults: a receiver that closes the connection", async () => {
  let n = 0;
  const r = rawReceiver(async (conn) => {
    await readRequest(conn);
    if (n++ > 0) await conn.write(enc.encode(OK));
    conn.close();
  });
  await withEngine(async (s, w) => {
    const [ok, failed] = await twoAttempts(s, w, r.url);
    assertFailed(failed, null, /closed|reset/);
    assertSucceeded(ok);
  }).finally(() => r.close());
});

Deno.test("faults: a receiver that is not listening yet", async () => {
  const port = freePort();
  let server: Deno.HttpServer | undefined;
  await withEngine(async (s, w) => {
    const sub = await subscribe(s, w.admin.token, `http://127.0.0.1:${port}/hook`);
    await post(s, w.admin.token, w.team.general_channel_id, "anyone there?");
    await waitUntil(async () => (await show(s, w.admin.token, sub.id)).deliveries.length === 1);
    server = Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, () => new Response("ok"));
    await waitUntil(async () => (await show(s, w.admin.token, sub.id)).deliveries.length === 2);
    const [ok, failed] = (await show(s, w.admin.token, sub.id)).deliveries;
    assertFailed(failed, null, /refused/);
    assertSucceeded(ok);
  }).finally(() => server?.shutdown());
});

/** Every event id, with how often the receiver got it. */
function received(hits: Hit[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const h of hits) {
    const id = JSON.parse(h.body).id;
    out.set(id, (out.get(id) ?? 0) + 1);
  }
  return out;
}

async function deliveries(kv: Store, subscriptionId: string): Promise<Delivery[]> {
  const out: Delivery[] = [];
  for await (const e of kv.list<Delivery>({ prefix: keys.deliverySlots(subscriptionId) })) {
    out.push(e.value);
  }
  return out;
}

/** The log tells the truth: every recorded success was received at least that many times. */
function assertLogTruthful(log: Delivery[], got: Map<string, number>) {
  const successes = new Map<string, number>();
  for (const d of log.filter((d) => d.succeeded)) {
    successes.set(d.event_id, (successes.get(d.event_id) ?? 0) + 1);
  }
  for (const [eventId, n] of successes) {
    assert.ok((got.get(eventId) ?? 0) >= n, `recorded ${n} successes of ${eventId}`);
  }
}

Deno.test("faults: SIGKILL after events commit, before delivery: all arrive after restart", async () => {
  const store = await sharedStore();
  const r = receiver();
  let service: Service | undefined;
  try {
    service = await startService(store.env);
    const w = await workspace(store.ctx);
    const sub = await subscribe(store.as(service), w.admin.token, r.url);
    await service.kill();
    service = undefined;

    // Written while the service is down: exactly the state a crash right after commit leaves.
    const subject = await authenticate(store.ctx, w.admin.token);
    const messages = [];
    for (let i = 0; i < 5; i++) {
      const body = `while down ${i}`;
      await postMessage(store.ctx, subject, w.team.general_channel_id, {
        ok: true,
        value: { body },
      });
      messages.push(body);
    }
    assert.equal(await countKeys(store.ctx.kv, keys.jobs(sub.id)), 5);

    service = await startService(store.env);
    await r.waitFor(5, 10_000);
    const got = received(r.hits);
    assert.equal(got.size, 5);
    const bodies = r.hits.map((h) => JSON.parse(h.body).data.body).sort();
    assert.deepEqual(bodies, messages.sort());
    await waitUntil(async () => (await unsettled(store.ctx.kv, sub.id)) === 0);
    const log = await deliveries(store.ctx.kv, sub.id);
    assert.equal(log.filter((d) => d.succeeded).length, 5);
    assertLogTruthful(log, got);
  } finally {
    await service?.kill();
    await r.close();
    await store.cleanup();
  }
});

Deno.test("faults: SIGKILL with an attempt in flight: attempted again after restart", async () => {
  const store = await sharedStore();
  const hold = Promise.withResolvers<void>();
  const r = receiver(async (n) => {
    if (n === 0) await hold.promise;
    return new Response("ok");
  });
  let service: Service | undefined;
  try {
    service = await startService(store.env);
    const w = await workspace(store.ctx);
    const sub = await subscribe(store.as(service), w.admin.token, r.url);
    const m = await post(store.as(service), w.admin.token, w.team.general_channel_id, "in flight");
    await r.waitFor(1);
    await service.kill();
    service = undefined;
    hold.resolve();
    assert.equal(await unsettled(store.ctx.kv, sub.id), 1, "the first attempt outlives the crash");
    assert.equal(
      (await deliveries(store.ctx.kv, sub.id)).length,
      0,
      "the cut attempt left no record",
    );

    // The killed process's lease on the job must run out before another process takes it.
    service = await startService(store.env);
    const [first, second] = await r.waitFor(2, 25_000);
    assert.equal(second.body, first.body);
    assert.equal(JSON.parse(second.body).data.id, m.id);
    await waitUntil(async () => (await unsettled(store.ctx.kv, sub.id)) === 0);
    const log = await deliveries(store.ctx.kv, sub.id);
    assert.equal(log.length, 1);
    assert.equal(log[0].succeeded, true);
    assertLogTruthful(log, received(r.hits));
  } finally {
    hold.resolve();
    await service?.kill();
    await r.close();
    await store.cleanup();
  }
});

Deno.test("faults: SIGKILL in the middle of a burst: every event still arrives", async () => {
  const store = await sharedStore();
  const r = receiver(async (n) => {
    await sleep(n % 3 === 0 ? 30 : 0);
    return new Response(null, { status: n % 4 === 1 ? 500 : 200 });
  });
  let service: Service | undefined;
  try {
    service = await startService(store.env);
    const w = await workspace(store.ctx);
    const subs = [
      await subscribe(store.as(service), w.admin.token, r.url, { name: "a" }),
      await subscribe(store.as(service), w.admin.token, r.url, { name: "b" }),
    ];
    const sent = await Promise.all(
      Array.from(
        { length: 30 },
        (_, i) => post(store.as(service!), w.admin.token, w.team.general_channel_id, `burst ${i}`),
      ),
    );
    await service.kill();
    service = undefined;
    const beforeRestart = r.hits.length;

    service = await startService(store.env);
    await waitUntil(
      async () => (await unsettled(store.ctx.kv)) === 0,
      30_000,
      "every job settled (the killed process's leases run out first)",
    );
    const got = received(r.hits);
    const eventsPerMessage = new Map<string, Set<string>>();
    for (const h of r.hits) {
      const env = JSON.parse(h.body);
      const set = eventsPerMessage.get(env.data.id) ?? new Set();
      set.add(env.id);
      eventsPerMessage.set(env.data.id, set);
    }
    for (const m of sent) assert.ok(eventsPerMessage.has(m.id), `message ${m.id} was delivered`);
    for (const sub of subs) {
      const log = await deliveries(store.ctx.kv, sub.id);
      const delivered = new Set(log.filter((d) => d.succeeded).map((d) => d.event_id));
      assert.equal(delivered.size, 30, `each event succeeded once for ${sub.id}`);
      assertLogTruthful(log, got);
    }
    assert.ok(r.hits.length >= 60 && beforeRestart <= r.hits.length);
  } finally {
    await service?.kill();
    await r.close();
    await store.cleanup();
  }
});
