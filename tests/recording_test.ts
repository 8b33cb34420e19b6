import assert from "node:assert/strict";
import { loadSettings } from "../core/settings.ts";
import type { DeliveryJob, Subscription } from "../core/webhook_records.ts";
import type { OutboxEvent } from "../core/types.ts";
import { keys } from "../kv/keys.ts";
import { LatestSubscriptions } from "../delivery/latest.ts";
import { MAX_BATCH, Recorder } from "../delivery/record.ts";
import type { Attempted } from "../delivery/attempt_plan.ts";
import { countKeys, storeEntries, unsettled } from "./harness.ts";
import { wrapStore } from "../kv/store/open.ts";
import type { Store } from "../kv/store/store.ts";

const webhooks = loadSettings({}).webhooks;

function subscription(id: string): Subscription {
  return {
    id,
    team_id: "team",
    name: "busy",
    url: "https://hook.example.test/",
    events: ["message.created"],
    channel_ids: null,
    status: "active",
    consecutive_failures: 0,
    last_success_at: null,
    disabled_at: null,
    created_at: new Date().toISOString(),
    created_by: "owner",
    secret: "sealed",
    previous_secret: null,
    previous_secret_expires_at: null,
  };
}

function eventOf(n: number): OutboxEvent {
  return {
    id: `event-${String(n).padStart(3, "0")}`,
    type: "message.created",
    team_id: "team",
    channel_id: "channel",
    created_at: new Date().toISOString(),
    data: {},
  };
}

/** Writes a job leased to this process until `leaseUntil`, and returns it as read. */
async function leasedJob(kv: Store, subId: string, event: OutboxEvent, leaseUntil: number) {
  const job: DeliveryJob = {
    subscription_id: subId,
    event_id: event.id,
    attempt: 1,
    next_attempt_at: event.created_at,
    created_at: event.created_at,
    lease_until: leaseUntil,
  };
  await kv.set(keys.job(subId, event.id), job);
  return await kv.get<DeliveryJob>(keys.job(subId, event.id)) as Deno.KvEntry<DeliveryJob>;
}

const succeeded = (subId: string, event: OutboxEvent, pending: Deno.KvEntry<DeliveryJob>) =>
  ({
    subscriptionId: subId,
    event,
    pending,
    attempt: 1,
    outcome: {
      succeeded: true,
      response_status: 200,
      error: null,
      response_body: null,
      retryAfterMs: null,
    },
    startedAt: Date.now(),
    durationMs: 1,
  }) satisfies Attempted;

Deno.test("recording: a busy subscription's attempts share commits beyond the 10 checks a commit allows", async () => {
  const kv = wrapStore(await Deno.openKv(":memory:"), ":memory:");
  try {
    const id = "sub-busy";
    await kv.set(keys.webhook(id), subscription(id));
    const commits: number[] = [];
    const atomic = kv.atomic.bind(kv);
    // Counts commits only; every one goes to the real store.
    kv.atomic = () => {
      commits.push(Date.now());
      return atomic();
    };
    const events = Array.from({ length: 60 }, (_, i) => eventOf(i));
    const jobs = await Promise.all(
      events.map((e) => leasedJob(kv, id, e, Date.now() + 60_000)),
    );
    commits.length = 0;
    const recorder = new Recorder(kv, webhooks, new LatestSubscriptions());
    await Promise.all(events.map((e, i) => recorder.record(succeeded(id, e, jobs[i]))));

    assert.ok(commits.length < 60 / 9, `${commits.length} commits for 60 attempts`);
    const deliveries = await Array.fromAsync(storeEntries(kv, keys.deliverySlots(id)));
    assert.equal(deliveries.length, 60, "every attempt has its Delivery record");
    assert.equal(await unsettled(kv, id), 0);
    const settled = await kv.get<Deno.KvU64>(keys.jobsSettled(id));
    assert.equal(settled.value?.value, 60n);
    assert.equal(recorder.backlog, 0);
  } finally {
    kv.close();
  }
});

Deno.test("recording: a job whose lease ran out is checked, and left alone when another process took it", async () => {
  const kv = wrapStore(await Deno.openKv(":memory:"), ":memory:");
  try {
    const id = "sub-lapsed";
    await kv.set(keys.webhook(id), subscription(id));
    const events = Array.from({ length: 12 }, (_, i) => eventOf(i));
    // Leases about to run out: each must be checked, so these take more than one commit.
    const jobs = await Promise.all(events.map((e) => leasedJob(kv, id, e, Date.now() + 1_000)));
    // Another process took the first one after its lease ran out, and holds it now.
    const taken = { ...jobs[0].value, lease_until: Date.now() + 60_000 };
    await kv.set(jobs[0].key, taken);
    const recorder = new Recorder(kv, webhooks, new LatestSubscriptions());
    await Promise.all(events.map((e, i) => recorder.record(succeeded(id, e, jobs[i]))));

    const left = await Array.fromAsync(storeEntries(kv, keys.jobs(id)));
    assert.deepEqual(left.map((e) => e.value), [taken], "the other process's job is untouched");
    const deliveries = await Array.fromAsync(storeEntries(kv, keys.deliverySlots(id)));
    assert.equal(deliveries.length, 12, "the attempt made is still on record");
    const settled = await kv.get<Deno.KvU64>(keys.jobsSettled(id));
    assert.equal(settled.value?.value, 11n);
  } finally {
    kv.close();
  }
});

/** `count` subscriptions, each with one job leased to this process for a minute. */
async function subscriptionsWithAJob(kv: Store, count: number) {
  const event = eventOf(0);
  const out: Attempted[] = [];
  for (let i = 0; i < count; i++) {
    const id = `sub-${String(i).padStart(3, "0")}`;
    await kv.set(keys.webhook(id), subscription(id));
    out.push(succeeded(id, event, await leasedJob(kv, id, event, Date.now() + 60_000)));
  }
  return out;
}

/** A fresh in-memory store, declared embedded (100 checks a commit) unless `remote`. */
async function withStore(fn: (kv: Store) => Promise<void>, { remote = false } = {}) {
  const kv = wrapStore(
    await Deno.openKv(":memory:"),
    remote ? "https://kv.example.test/db" : ":memory:",
  );
  try {
    await fn(kv);
  } finally {
    kv.close();
  }
}

/** Counts the commits made on `kv`; every one still goes to the real store. */
function countCommits(kv: Store): number[] {
  const commits: number[] = [];
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    commits.push(Date.now());
    return atomic();
  };
  return commits;
}

for (const [remote, allowed] of [[false, 100 / MAX_BATCH], [true, 11]] as const) {
  Deno.test(`recording: one event heard by 100 subscriptions takes ${allowed} commits at most (${remote ? "remote" : "embedded"} store)`, async () => {
    await withStore(async (kv) => {
      const attempts = await subscriptionsWithAJob(kv, 100);
      const commits = countCommits(kv);
      const recorder = new Recorder(kv, webhooks, new LatestSubscriptions());
      await Promise.all(attempts.map((a) => recorder.record(a)));
      assert.ok(commits.length <= allowed, `${commits.length} commits for 100 subscriptions`);
      assert.equal(await unsettled(kv), 0);
      for (const a of attempts) {
        const sub = (await kv.get<Subscription>(keys.webhook(a.subscriptionId))).value!;
        assert.equal(sub.last_success_at !== null, true);
        assert.equal(
          (await kv.get<Deno.KvU64>(keys.jobsSettled(a.subscriptionId))).value?.value,
          1n,
        );
      }
    }, { remote });
  });
}

Deno.test("recording: a subscription changed elsewhere fails the shared commit, which goes again read afresh", async () => {
  await withStore(async (kv) => {
    const attempts = await subscriptionsWithAJob(kv, 5);
    const latest = new LatestSubscriptions();
    const changed = attempts[2].subscriptionId;
    // This process last saw it as created; another renamed it since.
    latest.wrote((await kv.get<Subscription>(keys.webhook(changed))) as Deno.KvEntry<Subscription>);
    await kv.set(keys.webhook(changed), { ...subscription(changed), name: "renamed elsewhere" });
    const commits = countCommits(kv);
    const recorder = new Recorder(kv, webhooks, latest);
    await Promise.all(attempts.map((a) => recorder.record(a)));
    assert.equal(commits.length, 2, "the shared commit failed, and went again once");
    assert.equal(await unsettled(kv), 0, "every job settled");
    const renamed = (await kv.get<Subscription>(keys.webhook(changed))).value!;
    assert.equal(renamed.name, "renamed elsewhere", "the other process's change kept");
    assert.notEqual(renamed.last_success_at, null, "and this one's stats written over it");
    assert.equal(recorder.backlog, 0);
  });
});

Deno.test("recording: a subscription deleted meanwhile drops its jobs; the others are recorded", async () => {
  await withStore(async (kv) => {
    const attempts = await subscriptionsWithAJob(kv, 3);
    const gone = attempts[1].subscriptionId;
    await kv.delete(keys.webhook(gone));
    const recorder = new Recorder(kv, webhooks, new LatestSubscriptions());
    await Promise.all(attempts.map((a) => recorder.record(a)));
    assert.equal(await unsettled(kv), 0, "every job settled or dropped");
    assert.equal(await countKeys(kv, keys.deliverySlots(gone)), 0, "no record of a deleted one");
    for (const a of [attempts[0], attempts[2]]) {
      assert.equal(await countKeys(kv, keys.deliverySlots(a.subscriptionId)), 1);
    }
  });
});
