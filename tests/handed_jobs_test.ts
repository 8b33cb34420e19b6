/**
 * First attempts handed to the process that committed them, in one record per event (written from
 * 0.31.0): when that process stops before they are recorded, any engine of this release attempts
 * what is pending once the lease runs out. Real KV, real receivers on loopback.
 */
import assert from "node:assert/strict";
import { newId } from "../core/ids.ts";
import type { OutboxEvent } from "../core/types.ts";
import type { HandedJobs } from "../core/webhook_records.ts";
import { pendingJobs } from "../kv/outbox/backlog.ts";
import { expandHanded } from "../kv/outbox/handed_jobs.ts";
import { HandedShare } from "../kv/outbox/handed_share.ts";
import { firstJob } from "../kv/outbox/job_moves.ts";
import { keys } from "../kv/keys.ts";
import type { Store } from "../kv/store/store.ts";
import {
  api,
  countKeys,
  startEngine,
  startServer,
  type TestServer,
  unsettled,
  workspace,
} from "./harness.ts";
import { FAST, type Receiver, receiver, subscribe, waitUntil } from "./webhook_receivers.ts";
import { exampleData } from "../domain/webhooks/examples.ts";

interface Place {
  teamId: string;
  channelId: string;
}

/** An event, and its first attempts for `subscriptionIds` handed over until `leaseUntil`. */
async function handOver(
  kv: Store,
  { teamId, channelId, subscriptionIds, leaseUntil }: Place & {
    subscriptionIds: string[];
    leaseUntil: number;
  },
): Promise<OutboxEvent> {
  const event: OutboxEvent = {
    id: newId(),
    type: "message.created",
    team_id: teamId,
    channel_id: channelId,
    created_at: new Date().toISOString(),
    data: exampleData("message.created", { channelId }),
  };
  const subs = await Promise.all(subscriptionIds.map((id) => kv.get(keys.webhook(id))));
  const handed: HandedJobs = {
    event_id: event.id,
    created_at: event.created_at,
    lease_until: leaseUntil,
    pending: subscriptionIds.map((id, i) => ({
      subscription_id: id,
      subscription_version: subs[i].versionstamp!,
    })),
  };
  await kv.atomic()
    .set(keys.event(event.id), event)
    .set(keys.handedJob(leaseUntil, event.id), handed)
    .commit();
  return event;
}

const eventIds = (r: Receiver) => r.hits.map((h) => JSON.parse(h.body).id as string);

/** A workspace with a subscription per receiver. */
async function subscribed(s: TestServer, receivers: Receiver[]) {
  const w = await workspace(s.ctx);
  const subs: string[] = [];
  for (const r of receivers) subs.push((await subscribe(s, w.admin.token, r.url)).id);
  return { token: w.admin.token, subs, teamId: w.team.id, channelId: w.team.general_channel_id };
}

Deno.test("handed jobs: first attempts whose process stopped are attempted once its lease runs out, each once", async () => {
  const s = await startServer(FAST);
  const [a, b, gone] = [receiver(), receiver(), receiver()];
  try {
    const { token, subs, ...place } = await subscribed(s, [a, b, gone]);
    const ranOut = await handOver(s.ctx.kv, {
      ...place,
      subscriptionIds: subs,
      leaseUntil: Date.now() - 1,
    });
    // Deleted after its event was handed over: nothing is attempted, nor left, for it.
    assert.equal((await api(s, "DELETE", `/webhooks/${subs[2]}`, { token })).status, 204);
    // Its process still holds this one for a moment: left alone until then.
    const held = await handOver(s.ctx.kv, {
      ...place,
      subscriptionIds: [subs[0]],
      leaseUntil: Date.now() + 1_500,
    });
    const engine = startEngine(s.ctx, { sweepEveryMs: 60_000 });
    try {
      await waitUntil(() => a.hits.length >= 1 && b.hits.length >= 1);
      assert.deepEqual(eventIds(a), [ranOut.id], "a lease still running is respected");
      await waitUntil(() => a.hits.length === 2, 5_000, "the held event, once its lease ran out");
      await engine.idle();
      await waitUntil(async () => (await unsettled(s.ctx.kv)) === 0);
      assert.equal(await countKeys(s.ctx.kv, keys.handedJobs()), 0);
      for (const id of subs) assert.equal(await pendingJobs(s.ctx.kv, id), 0);
    } finally {
      await engine.stop();
    }
    assert.deepEqual(eventIds(a), [ranOut.id, held.id]);
    assert.deepEqual(eventIds(b), [ranOut.id]);
    assert.deepEqual(gone.hits, []);
  } finally {
    await s.close();
    await Promise.all([a, b, gone].map((r) => r.close()));
  }
});

Deno.test("handed jobs: of two engines that find a record whose lease ran out, one makes its jobs", async () => {
  const s = await startServer(FAST);
  const receivers = [receiver(), receiver()];
  try {
    const { subs, ...place } = await subscribed(s, receivers);
    const events: OutboxEvent[] = [];
    for (let i = 0; i < 3; i++) {
      events.push(
        await handOver(s.ctx.kv, { ...place, subscriptionIds: subs, leaseUntil: Date.now() - 1 }),
      );
    }
    const passes = await Promise.all([expandHanded(s.ctx.kv), expandHanded(s.ctx.kv)]);
    assert.equal(passes[0].made + passes[1].made, 6);
    assert.deepEqual(passes.map((p) => p.nextAt), [null, null]);
    for (const id of subs) assert.equal(await pendingJobs(s.ctx.kv, id), 3);
    const jobs = await Array.fromAsync(s.ctx.kv.list({ prefix: keys.jobs() }), (e) => e.key);
    assert.deepEqual(
      jobs.map((k) => `${String(k[1])}/${String(k[2])}`).sort(),
      subs.flatMap((id) => events.map((e) => `${id}/${e.id}`)).sort(),
    );
    assert.equal(await countKeys(s.ctx.kv, keys.handedJobs()), 0);
  } finally {
    await s.close();
    await Promise.all(receivers.map((r) => r.close()));
  }
});

Deno.test("handed jobs: first attempts set free while the rest of their record is settled become jobs, however often the settlements land first", async () => {
  const s = await startServer(FAST);
  const receivers = [receiver()];
  try {
    const { subs: [sub], ...place } = await subscribed(s, receivers);
    const kv = s.ctx.kv;
    // One real subscription freed, 35 others settled out of the record by commits of their own,
    // all at once: each round one commit lands and the rest find the record changed.
    const settledIds = Array.from({ length: 35 }, () => newId());
    const event = await handOver(kv, {
      ...place,
      subscriptionIds: [sub, ...settledIds],
      leaseUntil: Date.now() + 60_000,
    });
    const [record] = await Array.fromAsync(kv.list<HandedJobs>({ prefix: keys.handedJobs() }));
    const share = new HandedShare(record);
    const settleOut = async (id: string) => {
      for (;;) {
        const op = kv.atomic();
        const next = share.takeOut(op, [id]);
        const res = await op.commit();
        if (res.ok) return share.landed(next, res.versionstamp);
        await share.refresh(kv);
      }
    };
    const version = record.value.pending[0].subscription_version;
    // The settlements go first, so that each round one of them is the commit that lands.
    const settling = settledIds.map(settleOut);
    const freed = await share.toJobs(kv, [firstJob(event, sub, null, version)], null);
    await Promise.all(settling);
    assert.deepEqual(freed.map((j) => j.key), [keys.job(sub, event.id)]);
    assert.equal(await pendingJobs(kv, sub), 1);
    assert.equal(await countKeys(kv, keys.handedJobs()), 0, "the record is gone with its last");
  } finally {
    await s.close();
    await Promise.all(receivers.map((r) => r.close()));
  }
});
