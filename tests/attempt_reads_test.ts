import assert from "node:assert/strict";
import type { Subscription } from "../core/webhook_records.ts";
import type { OutboxEvent } from "../core/types.ts";
import { keys } from "../kv/keys.ts";
import { LatestSubscriptions, RecentEvents } from "../delivery/latest.ts";
import { countReads } from "./harness.ts";
import { wrapStore } from "../kv/store/open.ts";

const sub = (id: string, url: string) => ({ id, team_id: "team", url }) as Subscription;

Deno.test("attempt reads: one read of a subscription serves a burst, never one older than the work", async () => {
  const kv = wrapStore(await Deno.openKv(":memory:"), ":memory:");
  try {
    await kv.set(keys.webhook("s"), sub("s", "https://old.example.test/"));
    const reads = countReads(kv);
    const latest = new LatestSubscriptions();
    const burst = await Promise.all(Array.from({ length: 20 }, () => latest.fresh(kv, "s")));
    assert.equal(reads.get, 1, "twenty attempts, one read");
    assert.ok(burst.every((e) => e?.value.url === "https://old.example.test/"));

    // Changed elsewhere; an event made after the change carries its versionstamp.
    const changed = await kv.set(keys.webhook("s"), sub("s", "https://new.example.test/"));
    const cached = await latest.fresh(kv, "s");
    assert.equal(cached?.value.url, "https://old.example.test/", "within the freshness window");
    const after = await latest.fresh(kv, "s", changed.versionstamp);
    assert.equal(after?.value.url, "https://new.example.test/", "work made after a change sees it");
    assert.equal(reads.get, 2);

    await kv.delete(keys.webhook("s"));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await latest.fresh(kv, "s"), null, "a deletion is seen once the window passes");
  } finally {
    kv.close();
  }
});

Deno.test("attempt reads: a batch's events are read in one call of the store, once each", async () => {
  const kv = wrapStore(await Deno.openKv(":memory:"), ":memory:");
  try {
    const ids = Array.from({ length: 25 }, (_, i) => `event-${i}`);
    for (const id of ids) await kv.set(keys.event(id), { id } as OutboxEvent);
    const reads = countReads(kv);
    const events = new RecentEvents();
    await events.loadMany(kv, [...ids, ...ids.slice(0, 5)]);
    // The store splits the 25 to Deno KV's ten a call (kv/store/store.ts).
    assert.equal(reads.getMany, 1);
    assert.ok(!(events.load(kv, "event-7") instanceof Promise), "a held copy answers at once");
    assert.equal(reads.getMany + reads.get, 1, "held copies are not read again");
  } finally {
    kv.close();
  }
});
