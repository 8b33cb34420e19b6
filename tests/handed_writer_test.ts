/**
 * A post's first attempts leased to the process that committed it in one record per event (from
 * 0.31.0), instead of a job and a count per subscription: delivered each once, retried as jobs of
 * their own, freed as jobs when the process stops, made jobs when they wait too long. Real KV,
 * real receivers on loopback.
 */
import assert from "node:assert/strict";
import type { DeliveryJob, HandedJobs } from "../core/webhook_records.ts";
import { pendingJobs } from "../kv/outbox/backlog.ts";
import { HandedShare, heldFrom } from "../kv/outbox/handed_share.ts";
import { Dispatcher } from "../core/dispatcher.ts";
import type { OutboxEvent } from "../core/types.ts";
import { WaitingFirstAttempts } from "../delivery/waiting.ts";
import { keys } from "../kv/keys.ts";
import { Leases } from "../delivery/leases.ts";
import type { Store } from "../kv/store/store.ts";
import { countKeys, startEngine, startServer, workspace } from "./harness.ts";
import { FAST, post, receiver, show, subscribe, waitUntil } from "./webhook_receivers.ts";

const records = (kv: Store) =>
  Array.fromAsync(kv.list<HandedJobs>({ prefix: keys.handedJobs() }), (e) => e.value);

/** A receiver that holds every request until `open` is called. */
function gated() {
  const gate = Promise.withResolvers<void>();
  const r = receiver(async () => {
    await gate.promise;
    return new Response("ok");
  });
  return { ...r, open: () => gate.resolve() };
}

Deno.test("handed jobs: a post's first attempts are leased in one record, no job per subscription; each delivered once, and the record gone", async () => {
  const s = await startServer(FAST, { engine: true });
  const receivers = [gated(), gated(), gated()];
  try {
    const w = await workspace(s.ctx);
    const subs = [];
    for (const r of receivers) subs.push((await subscribe(s, w.admin.token, r.url)).id);
    const m = await post(s, w.admin.token, w.team.general_channel_id, "to three");
    await waitUntil(() => receivers.every((r) => r.hits.length === 1));
    const [record] = await records(s.ctx.kv);
    assert.deepEqual(record.pending.map((p) => p.subscription_id).sort(), [...subs].sort());
    assert.equal(await countKeys(s.ctx.kv, keys.jobs()), 0, "no job rows while in flight");
    for (const r of receivers) r.open();
    await waitUntil(async () => (await countKeys(s.ctx.kv, keys.handedJobs())) === 0);
    await s.engine!.idle();
    for (const id of subs) {
      assert.equal(await pendingJobs(s.ctx.kv, id), 0);
      const { deliveries } = await show(s, w.admin.token, id);
      assert.deepEqual(deliveries.map((d: { attempt: number }) => d.attempt), [1]);
    }
    for (const r of receivers) {
      assert.equal(r.hits.length, 1);
      assert.equal(JSON.parse(r.hits[0].body).data.id, m.id);
    }
  } finally {
    for (const r of receivers) r.open();
    await s.close();
    await Promise.all(receivers.map((r) => r.close()));
  }
});

Deno.test("handed jobs: a first attempt that fails is retried as a job of its own", async () => {
  const s = await startServer(FAST, { engine: true });
  const flaky = receiver((n) =>
    new Response(n === 0 ? "no" : "ok", { status: n === 0 ? 500 : 200 })
  );
  try {
    const w = await workspace(s.ctx);
    const { id } = await subscribe(s, w.admin.token, flaky.url);
    await post(s, w.admin.token, w.team.general_channel_id, "again");
    await flaky.waitFor(2);
    await s.engine!.idle();
    await waitUntil(async () => (await pendingJobs(s.ctx.kv, id)) === 0);
    assert.equal(await countKeys(s.ctx.kv, keys.handedJobs()), 0);
    assert.equal(await countKeys(s.ctx.kv, keys.jobs()), 0);
    const { deliveries } = await show(s, w.admin.token, id);
    assert.deepEqual(
      deliveries.map((d: { attempt: number; succeeded: boolean }) => [d.attempt, d.succeeded]),
      [[2, true], [1, false]],
    );
    assert.equal(flaky.hits.length, 2);
  } finally {
    await s.close();
    await flaky.close();
  }
});

Deno.test("handed jobs: an engine that stops before starting its first attempts leaves them as free jobs, which another engine delivers once", async () => {
  const s = await startServer(FAST);
  const slow = gated();
  const rest = [receiver(), receiver()];
  try {
    const w = await workspace(s.ctx);
    const subs = [];
    for (const r of [slow, ...rest]) subs.push((await subscribe(s, w.admin.token, r.url)).id);
    // One attempt at a time: the slow receiver's holds the others back.
    const first = startEngine(s.ctx, { concurrency: 1, sweepEveryMs: 60_000 });
    await post(s, w.admin.token, w.team.general_channel_id, "held back");
    await waitUntil(() => slow.hits.length + rest[0].hits.length + rest[1].hits.length === 1);
    const stopped = first.stop();
    slow.open();
    await stopped;
    const started = [slow, ...rest].filter((r) => r.hits.length === 1).length;
    assert.equal(started, 1);
    assert.equal(await countKeys(s.ctx.kv, keys.handedJobs()), 0);
    const jobs = await Array.fromAsync(s.ctx.kv.list<DeliveryJob>({ prefix: keys.jobs() }));
    assert.equal(jobs.length, 2);
    for (const j of jobs) assert.equal(j.value.lease_until, null, "free for any engine");
    const second = startEngine(s.ctx, { sweepEveryMs: 60_000 });
    try {
      await waitUntil(() => [slow, ...rest].every((r) => r.hits.length === 1));
      await second.idle();
      await waitUntil(async () => (await countKeys(s.ctx.kv, keys.jobs())) === 0);
    } finally {
      await second.stop();
    }
    for (const r of [slow, ...rest]) assert.equal(r.hits.length, 1);
    for (const id of subs) assert.equal(await pendingJobs(s.ctx.kv, id), 0);
  } finally {
    slow.open();
    await s.close();
    await Promise.all([slow, ...rest].map((r) => r.close()));
  }
});

Deno.test("handed jobs: a first attempt that waited too long for its record's lease becomes a job of its own; one already expanded by another engine is left", async () => {
  const s = await startServer(FAST);
  try {
    const { kv } = s.ctx;
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    const leaseUntil = Date.now() + 1_000;
    const record: HandedJobs = {
      event_id: "e1",
      created_at: new Date().toISOString(),
      lease_until: leaseUntil,
      pending: [a, b].map((id) => ({ subscription_id: id, subscription_version: "00" })),
    };
    const key = keys.handedJob(leaseUntil, "e1");
    const { versionstamp } = await kv.atomic().set(key, record).commit() as Deno.KvCommitResult;
    const share = new HandedShare({ key, value: record, versionstamp });
    const job = (id: string): DeliveryJob => ({
      subscription_id: id,
      event_id: "e1",
      attempt: 1,
      next_attempt_at: record.created_at,
      created_at: record.created_at,
      lease_until: leaseUntil,
      subscription_version: "00",
    });
    const leases = new Leases(kv, 500);
    const kept = await leases.keep({
      key: keys.job(a, "e1"),
      value: job(a),
      versionstamp,
      handed: share,
    });
    assert.ok(kept && !kept.handed);
    assert.ok(kept.value.lease_until! >= Date.now() + 10_000, "leased afresh");
    assert.equal(
      (await kv.get<DeliveryJob>(keys.job(a, "e1"))).value?.lease_until,
      kept.value.lease_until,
    );
    assert.deepEqual((await kv.get<HandedJobs>(key)).value?.pending.map((p) => p.subscription_id), [
      b,
    ]);
    assert.equal(await pendingJobs(kv, a), 1);
    // Another engine expanded the record meanwhile: b's first attempt is its job now, not ours.
    await kv.atomic().delete(key).set(keys.job(b, "e1"), { ...job(b), lease_until: null }).commit();
    const lost = await leases.keep({
      key: keys.job(b, "e1"),
      value: job(b),
      versionstamp,
      handed: share,
    });
    assert.equal(lost, null);
    assert.equal((await kv.get<DeliveryJob>(keys.job(b, "e1"))).value?.lease_until, null);
    assert.equal(await countKeys(kv, keys.handedJobs()), 0);
  } finally {
    await s.close();
  }
});

Deno.test("handed jobs: first attempts beyond the window wait in their record, not as jobs, and are each delivered once as room frees", async () => {
  const s = await startServer(FAST);
  const receivers = [gated(), gated(), gated(), gated(), gated()];
  const engine = startEngine(s.ctx, { window: 2, sweepEveryMs: 60_000 });
  try {
    const w = await workspace(s.ctx);
    const subs = [];
    for (const r of receivers) subs.push((await subscribe(s, w.admin.token, r.url)).id);
    await post(s, w.admin.token, w.team.general_channel_id, "to five, two at a time");
    await waitUntil(() => receivers.filter((r) => r.hits.length === 1).length === 2);
    const [record] = await records(s.ctx.kv);
    assert.equal(record.pending.length, 5);
    assert.equal(await countKeys(s.ctx.kv, keys.jobs()), 0, "the three waiting have no job rows");
    for (const r of receivers) r.open();
    await waitUntil(() => receivers.every((r) => r.hits.length === 1));
    await engine.idle();
    await waitUntil(async () => (await countKeys(s.ctx.kv, keys.handedJobs())) === 0);
    for (const id of subs) assert.equal(await pendingJobs(s.ctx.kv, id), 0);
    for (const r of receivers) assert.equal(r.hits.length, 1);
  } finally {
    for (const r of receivers) r.open();
    await engine.stop();
    await s.close();
    await Promise.all(receivers.map((r) => r.close()));
  }
});

Deno.test("handed jobs: first attempts that waited until their record's lease no longer covers an attempt become free jobs", () =>
  freedWhile({ leaseCovers: false, waitedMs: 0 }));

Deno.test("handed jobs: first attempts that waited half a second for this process's room become free jobs, for any engine to take", () =>
  freedWhile({ leaseCovers: true, waitedMs: 600 }));

Deno.test("handed jobs: alone on the store, first attempts that waited half a second stay with their process", () =>
  freedWhile({ leaseCovers: true, waitedMs: 600, othersRun: false }));

/**
 * Waiting first attempts with no room, as the window saw them: both become free jobs, unless no
 * other instance runs and their lease still covers them.
 */
async function freedWhile(
  { leaseCovers, waitedMs, othersRun = true }: {
    leaseCovers: boolean;
    waitedMs: number;
    othersRun?: boolean;
  },
) {
  const s = await startServer(FAST);
  try {
    const { kv } = s.ctx;
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    const leaseUntil = Date.now() + 60_000;
    const value: HandedJobs = {
      event_id: "e2",
      created_at: new Date().toISOString(),
      lease_until: leaseUntil,
      pending: ids.map((id) => ({ subscription_id: id, subscription_version: "00" })),
    };
    const key = keys.handedJob(leaseUntil, "e2");
    const { versionstamp } = await kv.atomic().set(key, value).commit() as Deno.KvCommitResult;
    const held = heldFrom({
      event: {} as OutboxEvent,
      jobs: [],
      waiting: jobsOf(value),
      record: { key, value },
    }, versionstamp);
    const dispatcher = new Dispatcher({
      global: 1,
      perLane: 1,
      maxPerLane: 1,
      window: 0,
      laneWindow: 0,
    });
    const submitted: string[] = [];
    const waiting = new WaitingFirstAttempts({
      kv,
      dispatcher,
      max: 10,
      covers: () => leaseCovers,
      submit: (job) => void submitted.push(job.value.subscription_id),
      timers: false,
      othersRun: () => othersRun,
    });
    for (const job of held.waiting) waiting.add(job, Date.now() - waitedMs);
    waiting.feed();
    if (!othersRun && leaseCovers) {
      assert.deepEqual(waiting.takeAll().map((j) => j.value.subscription_id), ids);
      assert.equal(await countKeys(kv, keys.handedJobs()), 1);
      return;
    }
    await waitUntil(async () => (await countKeys(kv, keys.jobs())) === 2);
    assert.deepEqual(submitted, []);
    assert.equal(await countKeys(kv, keys.handedJobs()), 0);
    for (const e of await Array.fromAsync(kv.list<DeliveryJob>({ prefix: keys.jobs() }))) {
      assert.equal(e.value.lease_until, null);
    }
    assert.deepEqual(waiting.takeAll(), []);
  } finally {
    await s.close();
  }
}

/** A record's first attempts as the jobs they would be. */
const jobsOf = (r: HandedJobs): DeliveryJob[] =>
  r.pending.map((p) => ({
    subscription_id: p.subscription_id,
    event_id: r.event_id,
    attempt: 1,
    next_attempt_at: r.created_at,
    created_at: r.created_at,
    lease_until: r.lease_until,
    subscription_version: p.subscription_version,
  }));
