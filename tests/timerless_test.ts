/**
 * Background work without timers (DELIVERY_TIMERS=false, the default on Deno Deploy): requests
 * deliver what they commit, and the every-minute cron task sends everything due later, once, under
 * the engine's leases. Here the cron task's handler is called as Deploy's cron would call it.
 */
import assert from "node:assert/strict";
import { deliverDue } from "../delivery/cron.ts";
import type { DeliveryEngine } from "../delivery/engine_contract.ts";
import type { Ctx } from "../domain/context.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import { recoverWebhook, redeliver } from "../domain/webhooks/sends.ts";
import { wrapStore } from "../kv/store/open.ts";
import { keys } from "../kv/keys.ts";
import type { DeliveryJob } from "../core/webhook_records.ts";
import { api, startEngine, startServer, type TestServer, unsettled, workspace } from "./harness.ts";
import { sharedStore, startService } from "./processes.ts";
import { post, receiver, show, sleep, subscribe, waitUntil } from "./webhook_receivers.ts";

const TIMERLESS = { DELIVERY_TIMERS: "false", WEBHOOKS_BACKOFF: "1500ms", WEBHOOKS_TIMEOUT: "1" };

/** A second process's handle on the server's store file, with an engine of its own. */
async function secondProcess(s: TestServer): Promise<{ ctx: Ctx; engine: DeliveryEngine }> {
  const kv = wrapStore(await Deno.openKv(s.ctx.settings.kvPath), s.ctx.settings.kvPath);
  const ctx: Ctx = { ...s.ctx, kv };
  return { ctx, engine: startEngine(ctx) };
}

/** When the subscription's retry is due, once its first attempt's failure is recorded. */
async function retryDueAt(ctx: Ctx, subscriptionId: string): Promise<number> {
  let dueAt = NaN;
  await waitUntil(async () => {
    for await (const e of ctx.kv.list<DeliveryJob>({ prefix: keys.jobs(subscriptionId) })) {
      if (e.value.attempt === 2) dueAt = Date.parse(e.value.next_attempt_at);
    }
    return !Number.isNaN(dueAt);
  });
  return dueAt;
}

async function withTimerless(
  fn: (s: TestServer, other: { ctx: Ctx; engine: DeliveryEngine }) => Promise<void>,
  env: Record<string, string> = {},
) {
  const dir = await Deno.makeTempDir({ prefix: "timerless-" });
  const s = await startServer(
    { ...TIMERLESS, KV_PATH: `${dir}/kv.sqlite3`, ...env },
    { engine: true },
  );
  const other = await secondProcess(s);
  try {
    await fn(s, other);
  } finally {
    await other.engine.stop();
    other.ctx.kv.close();
    await s.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("timerless: a retry waits for the cron task, goes out once it is due, and once only", () => {
  const r = receiver((n) => new Response(null, { status: n === 0 ? 500 : 204 }));
  return withTimerless(async (s, other) => {
    const w = await workspace(s.ctx);
    const sub = await subscribe(s, w.admin.token, r.url);
    await post(s, w.admin.token, w.team.general_channel_id, "fails once");
    await r.waitFor(1);
    const failedAt = r.hits[0].at;

    await deliverDue(s.engine!);
    assert.equal(r.hits.length, 1, "not due yet: the cron task sends nothing");
    // Due 1.5 s (+ up to 10% jitter) after the service took the failure in, which a busy machine
    // does a while after the receiver answered: the retry's job says when. Without timers nothing
    // wakes the service meanwhile.
    const dueAt = await retryDueAt(s.ctx, sub.id);
    await sleep(dueAt + 100 - Date.now());
    assert.equal(r.hits.length, 1, "no timer of the service's own sent the retry");

    await Promise.all([deliverDue(s.engine!), deliverDue(other.engine), deliverDue(s.engine!)]);
    await r.waitFor(2);
    assert.ok(r.hits[1].at - failedAt >= 1_500, "never before its time");
    await sleep(300);
    assert.equal(r.hits.length, 2, "three cron runs at once sent it once");
    assert.equal(r.hits[1].body, r.hits[0].body);
    await waitUntil(async () => (await unsettled(s.ctx.kv, sub.id)) === 0);
    const shown = await show(s, w.admin.token, sub.id);
    assert.deepEqual(shown.deliveries.map((d: { succeeded: boolean }) => d.succeeded), [
      true,
      false,
    ]);
  }).finally(() => r.close());
});

Deno.test("timerless: redeliveries and recovers made elsewhere go out with the cron task, once", () => {
  const r = receiver((n) => new Response(null, { status: n === 0 ? 500 : 204 }));
  return withTimerless(async (s, other) => {
    const w = await workspace(s.ctx);
    const sub = await subscribe(s, w.admin.token, r.url);
    await post(s, w.admin.token, w.team.general_channel_id, "fails for good");
    await r.waitFor(1);
    await waitUntil(async () => (await show(s, w.admin.token, sub.id)).deliveries.length === 1);
    const [failed] = (await show(s, w.admin.token, sub.id)).deliveries;

    // Asked through another process that runs no engine: only this one's cron run sends them.
    const admin = await authenticate(other.ctx, w.admin.token);
    await other.engine.stop();
    const since = new Date(Date.now() - 60_000);
    assert.deepEqual(await recoverWebhook(other.ctx, admin, sub.id, { ok: true, value: since }), {
      events: 1,
      retrying: 0,
    });
    await sleep(500);
    assert.equal(r.hits.length, 1, "nothing wakes this process for another's recover");
    await Promise.all([deliverDue(s.engine!), deliverDue(s.engine!)]);
    await r.waitFor(2);

    await redeliver(other.ctx, admin, sub.id, failed.id);
    await sleep(500);
    assert.equal(r.hits.length, 2, "nor for its redelivery");
    await deliverDue(s.engine!);
    await r.waitFor(3);
    await sleep(300);
    assert.equal(r.hits.length, 3, "each once");
    assert.equal(new Set(r.hits.map((h) => JSON.parse(h.body).id)).size, 1, "one event, 3 times");

    // Asked here, a redelivery goes out at once: this process's engine takes its own commits.
    const res = await api(s, "POST", `/webhooks/${sub.id}/deliveries/${failed.id}/redeliver`, {
      token: w.admin.token,
    });
    assert.equal(res.status, 202);
    await r.waitFor(4);
  }, { WEBHOOKS_MAX_ATTEMPTS: "1" }).finally(() => r.close());
});

Deno.test("timerless: work a SIGKILLed instance left goes out with the cron task once its lease ends", async () => {
  const store = await sharedStore({ DELIVERY_TIMERS: "false" });
  const hold = Promise.withResolvers<void>();
  const r = receiver(async (n) => {
    if (n === 0) await hold.promise;
    return new Response("ok");
  });
  const service = await startService(store.env);
  let engine: DeliveryEngine | undefined;
  try {
    const w = await workspace(store.ctx);
    const sub = await subscribe(store.as(service), w.admin.token, r.url);
    await post(store.as(service), w.admin.token, w.team.general_channel_id, "in flight");
    await r.waitFor(1);
    await service.kill();
    hold.resolve();
    engine = startEngine(store.ctx, { timers: false });
    await deliverDue(engine);
    assert.equal(r.hits.length, 1, "the dead instance's lease still holds");
    // Its lease: WEBHOOKS_TIMEOUT (1 s) + 15 s.
    await sleep(16_500);
    assert.equal(r.hits.length, 1, "nothing sends it without the cron task");
    await deliverDue(engine);
    await r.waitFor(2);
    assert.equal(r.hits[1].body, r.hits[0].body);
    await waitUntil(async () => (await unsettled(store.ctx.kv, sub.id)) === 0);
  } finally {
    hold.resolve();
    await engine?.stop();
    await service.kill();
    await r.close();
    await store.cleanup();
  }
});

Deno.test("timerless: a request leaves no interval and no long timeout running", async () => {
  const live = new Map<unknown, { interval: boolean; ms: number }>();
  const { setTimeout: st, clearTimeout: ct, setInterval: si, clearInterval: ci } = globalThis;
  const track = (interval: boolean) =>
  (
    fn: (...args: unknown[]) => void,
    ms = 0,
    ...args: unknown[]
  ) => {
    const id = (interval ? si : st)(
      (...a: unknown[]) => {
        if (!interval) live.delete(id);
        fn(...a);
      },
      ms,
      ...args,
    );
    live.set(id, { interval, ms });
    return id;
  };
  const untrack = (clear: (id?: number) => void) => (id?: number) => {
    if (id !== undefined) live.delete(id);
    clear(id);
  };
  const r = receiver();
  Object.assign(globalThis, {
    setTimeout: track(false),
    setInterval: track(true),
    clearTimeout: untrack(ct),
    clearInterval: untrack(ci),
  });
  let s: TestServer | undefined;
  try {
    s = await startServer(TIMERLESS, { engine: true });
    const w = await workspace(s.ctx);
    await subscribe(s, w.admin.token, r.url);
    await post(s, w.admin.token, w.team.general_channel_id, "delivered at once");
    await r.waitFor(1);
    await s.engine!.idle();
    await deliverDue(s.engine!);
    await sleep(100);
    const left = [...live.values()];
    assert.deepEqual(left.filter((t) => t.interval), [], "no interval");
    assert.deepEqual(left.filter((t) => t.ms > 1_000), [], "no long timeout");
  } finally {
    Object.assign(globalThis, {
      setTimeout: st,
      clearTimeout: ct,
      setInterval: si,
      clearInterval: ci,
    });
    await s?.close();
    await r.close();
  }
});
