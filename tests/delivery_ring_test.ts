/**
 * Delivery records in the ring of slots (kv/keys.ts `delivery_slots`), beside those keyed by id:
 * every reader takes both layouts, newest first, so records a later release writes in the ring
 * are shown, found and deleted like the rest.
 */
import assert from "node:assert/strict";
import { newId } from "../core/ids.ts";
import type { Delivery } from "../core/webhook_records.ts";
import { pruneById } from "../kv/outbox/deliveries.ts";
import { keys } from "../kv/keys.ts";
import { api, countKeys, withWorkspace } from "./harness.ts";
import { show, subscribe } from "./webhook_receivers.ts";

const record = (subscriptionId: string, eventId: string, at: number): Delivery => ({
  id: newId(at),
  subscription_id: subscriptionId,
  event_id: eventId,
  event_type: "message.created",
  attempt: 1,
  succeeded: true,
  response_status: 200,
  error: null,
  created_at: new Date(at).toISOString(),
});

Deno.test("delivery records: those in the ring of slots are shown, found and deleted with those keyed by id", async () => {
  await withWorkspace(async (s, w) => {
    const sub = await subscribe(s, w.admin.token, "http://127.0.0.1:9/hook");
    const eventId = newId();
    await s.ctx.kv.set(keys.event(eventId), { id: eventId });
    const start = Date.now() - 1_000_000;
    const older = Array.from({ length: 30 }, (_, i) => record(sub.id, eventId, start + i));
    for (const d of older) await s.ctx.kv.set(keys.delivery(sub.id, d.id), d);
    // The ring wrapped: the newest sit in the first slots, the oldest of the ring after them.
    const newer = Array.from({ length: 12 }, (_, i) => record(sub.id, eventId, start + 1_000 + i));
    for (const [i, d] of newer.entries()) {
      await s.ctx.kv.set(keys.deliverySlot(sub.id, (i + 95) % 100), d);
    }

    const shown = (await show(s, w.admin.token, sub.id)).deliveries.map((d: Delivery) => d.id);
    const expected = [...newer.toReversed(), ...older.toReversed()].slice(0, 20).map((d) => d.id);
    assert.deepEqual(shown, expected, "the 20 newest of both layouts, newest first");

    for (const d of [newer[3], older[0]]) {
      const res = await api(s, "POST", `/webhooks/${sub.id}/deliveries/${d.id}/redeliver`, {
        token: w.admin.token,
      });
      assert.equal(res.status, 202, JSON.stringify(res.body));
    }
    const unknown = await api(s, "POST", `/webhooks/${sub.id}/deliveries/${newId()}/redeliver`, {
      token: w.admin.token,
    });
    assert.equal(unknown.status, 404);

    const gone = await api(s, "DELETE", `/webhooks/${sub.id}`, { token: w.admin.token });
    assert.equal(gone.status, 204);
    assert.equal(await countKeys(s.ctx.kv, keys.deliverySlots(sub.id)), 0);
    assert.equal(await countKeys(s.ctx.kv, keys.deliveries(sub.id)), 0);
  });
});

Deno.test("delivery records: a sweep deletes those keyed by id only once 100 newer are kept, in either layout", async () => {
  await withWorkspace(async (s, w) => {
    const sub = await subscribe(s, w.admin.token, "http://127.0.0.1:9/hook");
    const kv = s.ctx.kv;
    const start = Date.now() - 1_000_000;
    // 80 keyed by id and 60 in the ring, interleaved in time: the 140 alternate from the oldest.
    const all = Array.from({ length: 140 }, (_, i) => record(sub.id, newId(), start + i));
    const [byId, inRing] = [all.filter((_, i) => i % 7 < 4), all.filter((_, i) => i % 7 >= 4)];
    assert.equal(byId.length, 80);
    for (const d of byId) await kv.set(keys.delivery(sub.id, d.id), d);
    for (const [i, d] of inRing.entries()) await kv.set(keys.deliverySlot(sub.id, i), d);
    await kv.set(keys.deliveriesWritten(sub.id), new Deno.KvU64(80n));

    // Those keyed by id among the 40 oldest of both layouts go; the ring's are overwritten later.
    const stale = byId.filter((d) => d.id < all[40].id);
    assert.equal(await pruneById(kv, sub.id), stale.length);
    const kept = await Array.fromAsync(kv.list<Delivery>({ prefix: keys.deliveries(sub.id) }));
    assert.deepEqual(kept.map((e) => e.value.id), byId.slice(stale.length).map((d) => d.id));
    const pruned = (await kv.get<Deno.KvU64>(keys.deliveriesPruned(sub.id))).value?.value;
    assert.equal(pruned, BigInt(stale.length), "counted as pruned, as 0.31.0 prunes by the counts");
    assert.equal(await pruneById(kv, sub.id), 0, "the latest 100 stay");
    assert.equal(await countKeys(kv, keys.deliverySlots(sub.id)), 60, "the ring is never pruned");
  });
});
