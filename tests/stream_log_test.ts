import assert from "node:assert/strict";
import { newId } from "../core/ids.ts";
import { keys } from "../kv/keys.ts";
import { eventsVersions, type LogPosition, readLog } from "../kv/stream/stream_log.ts";
import { logEvents } from "../kv/stream/stream_markers.ts";
import { writeEvent } from "../kv/outbox/outbox.ts";
import { wrapStore } from "../kv/store/open.ts";
import type { Store } from "../kv/store/store.ts";

const TEAM = "team";
const START: LogPosition = { versionstamp: "", id: "" };

const eventOf = (n: number) => ({
  id: newId(Date.now() + n),
  type: "message.created" as const,
  channel_id: `channel-${n}`,
});

async function countUnder(kv: Store, prefix: Deno.KvKey): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix })) n++;
  return n;
}

async function withKv(run: (kv: Store) => Promise<void>) {
  const kv = wrapStore(await Deno.openKv(":memory:"), ":memory:");
  try {
    await run(kv);
  } finally {
    await kv.settled();
    kv.close();
  }
}

const versionOf = async (kv: Store) => (await eventsVersions(kv, [TEAM])).get(TEAM)!;

Deno.test("stream log: a commit's events share one marker and one entry, read in order from any of them", () =>
  withKv(async (kv) => {
    const events = [1, 2, 3, 4, 5].map(eventOf);
    const op = kv.atomic();
    for (const e of events.toReversed()) {
      const event = { ...e, team_id: TEAM, data: {}, created_at: "" };
      writeEvent(op, event, { open: false, expireIn: 60_000 });
    }
    await op.commit();
    assert.equal(await countUnder(kv, keys.streamPendingAll(TEAM)), 1);

    const pending = await readLog(kv, TEAM, {
      from: START,
      frontier: await versionOf(kv),
      limit: 100,
    });
    assert.deepEqual(pending.events.map((e) => e.id), events.map((e) => e.id));

    await kv.settled();
    assert.equal(await countUnder(kv, keys.streamPendingAll(TEAM)), 0);
    assert.equal(await countUnder(kv, keys.teamStream(TEAM)), 1);
    const version = await versionOf(kv);
    const all = await readLog(kv, TEAM, { from: START, frontier: version, limit: 100 });
    assert.deepEqual(all.events.map((e) => e.id), events.map((e) => e.id));
    assert.deepEqual(all.events.map((e) => e.channel_id), events.map((e) => e.channel_id));

    const first = await readLog(kv, TEAM, { from: all.events[1], frontier: version, limit: 2 });
    assert.deepEqual(first.events.map((e) => e.id), [events[2].id, events[3].id]);
    assert.equal(first.more, true);
    const rest = await readLog(kv, TEAM, { from: first.events[1], frontier: version, limit: 2 });
    assert.deepEqual(rest.events.map((e) => e.id), [events[4].id]);
    assert.equal(rest.more, false);
  }));

Deno.test("stream log: a marker its process never moved is read, and a reader moves it whole", () =>
  withKv(async (kv) => {
    const events = [1, 2, 3].map(eventOf);
    // What a process that died right after its commit leaves: the marker, never logged.
    await kv.atomic()
      .set(keys.streamPending(TEAM, events[0].id), { events })
      .set(keys.teamEventsVersion(TEAM), events[0].id)
      .commit();
    const version = await versionOf(kv);
    const found = await readLog(kv, TEAM, { from: START, frontier: version, limit: 100 });
    assert.deepEqual(found.events.map((e) => e.id), events.map((e) => e.id));
    assert.deepEqual(found.pending.map((e) => e.marker), events.map(() => events[0].id));

    await logEvents(kv, TEAM, found.pending);
    assert.equal(await countUnder(kv, keys.streamPendingAll(TEAM)), 0);
    const logged = await readLog(kv, TEAM, { from: START, frontier: version, limit: 100 });
    assert.deepEqual(logged.events, found.events);
  }));

Deno.test("stream log: entries of one event each, as earlier versions wrote them, are read", () =>
  withKv(async (kv) => {
    const [old, pending] = [1, 2].map(eventOf);
    const landed = await kv.set(["scratch"], 1);
    await kv.set(keys.teamStreamAt(TEAM, landed.versionstamp, old.id), {
      type: old.type,
      channel_id: old.channel_id,
    });
    await kv.atomic()
      .set(keys.streamPending(TEAM, pending.id), {
        type: pending.type,
        channel_id: pending.channel_id,
      })
      .set(keys.teamEventsVersion(TEAM), pending.id)
      .commit();
    const read = await readLog(kv, TEAM, {
      from: START,
      frontier: await versionOf(kv),
      limit: 100,
    });
    assert.deepEqual(read.events.map((e) => [e.id, e.channel_id]), [
      [old.id, old.channel_id],
      [pending.id, pending.channel_id],
    ]);
  }));
