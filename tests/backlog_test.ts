/**
 * A delivery backlog lives in KV, not in memory: posts outrun delivery for a while, the engine
 * holds no more than WEBHOOKS_MAX_IN_MEMORY jobs at any moment, a slow endpoint does not starve
 * the others, and every post still reaches every matching subscription. The short form of
 * `deno task soak`.
 */
import assert from "node:assert/strict";
import { measureBacklog } from "../kv/outbox/backlog.ts";
import { keys } from "../kv/keys.ts";
import type { Message } from "../core/types.ts";
import { countKeys, createChannelAs, handedPending, unsettled, withWorkspace } from "./harness.ts";
import { postCounted, sleep, subscribe, waitUntil } from "./webhook_receivers.ts";
import type { Store } from "../kv/store/store.ts";
import { deliveryFaults } from "./event_schema_check.ts";

const WINDOW = 100;
const POSTING_MS = 30_000;
const CLIENTS = 4;
/** Posting holds off while this many jobs wait, so the backlog stands without growing forever. */
const STANDING = 5_000;
/** Every this many posts one goes to the slow subscription's channel. */
const SLOW_SHARE = 400;

/** Until `holding` settles or `holdMs` pass, whichever is first; no timer is left behind. */
function heldUntil({ holding, holdMs }: { holding: Promise<void>; holdMs: number }) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((done) => timer = setTimeout(done, holdMs));
  return Promise.race([holding, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A receiver that notes which messages it got: after `delayMs`, or, while `holding` is pending,
 * up to `holdMs` (a backlog then forms however fast or slow the machine posts).
 */
function collector(delayMs = 0, hold?: { holding: Promise<void>; holdMs: number }) {
  const got = new Set<string>();
  let count = 0;
  const faults: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.text();
    const fault = deliveryFaults(body);
    if (fault) faults.push(fault);
    const envelope = JSON.parse(body);
    if (hold) await heldUntil(hold);
    if (delayMs) await sleep(delayMs);
    got.add(envelope.data.id);
    count++;
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    got,
    count: () => count,
    /** Stops it; fails if a delivery did not match its type's catalog schema. */
    close: async () => {
      await server.shutdown();
      assert.deepEqual(faults, [], "every delivery matches its type's schema in the catalog");
    },
  };
}

async function timeline(kv: Store, channelId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of kv.list<Message>({ prefix: keys.timeline(channelId) })) {
    ids.push(e.value.id);
  }
  return ids;
}

Deno.test("backlog: memory holds a bounded window of it, and nothing is lost", async () => {
  // While posting lasts, "fast" receivers answer after 4 s (within the 5 s timeout), so posts
  // outrun delivery on any machine, however busy: a lane attempts 4 at a time here, so 1 delivery
  // a second per subscription. Then they take 5 ms, and the backlog drains.
  const posting = Promise.withResolvers<void>();
  const held = { holding: posting.promise, holdMs: 4_000 };
  const fast = [collector(5, held), collector(5, held)];
  const slow = collector(1_000);
  await withWorkspace(
    async (s, w) => {
      const general = w.team.general_channel_id;
      const quiet = await createChannelAs(s, w.admin.token, "slow lane");
      for (const r of fast) await subscribe(s, w.admin.token, r.url, { channel_ids: [general] });
      await subscribe(s, w.admin.token, slow.url, { channel_ids: [quiet] });

      let maxHeld = 0;
      const sampler = setInterval(() => maxHeld = Math.max(maxHeld, s.engine!.held()), 10);
      const statuses = new Map<number, number>();
      const until = Date.now() + POSTING_MS;
      let n = 0;
      let backlog = 0;
      let maxBacklog = 0;
      const watch = setInterval(async () => {
        backlog = (await measureBacklog(s.ctx.kv)).pending;
        maxBacklog = Math.max(maxBacklog, backlog);
      }, 200);
      await Promise.all(Array.from({ length: CLIENTS }, async () => {
        while (Date.now() < until) {
          if (backlog > STANDING) {
            await sleep(20);
            continue;
          }
          const channel = ++n % SLOW_SHARE === 0 ? quiet : general;
          await postCounted(s.url, w.admin.token, channel, `post ${n}`, statuses);
        }
      }));
      clearInterval(watch);
      posting.resolve();
      // Counted without a scan before and after one: delivery goes on while the scan runs, and
      // first attempts still waiting in their records become jobs (after half a second of
      // waiting): never more of those than were waiting.
      const waiting = await handedPending(s.ctx.kv);
      const before = await measureBacklog(s.ctx.kv);
      const pendingAtEnd = await countKeys(s.ctx.kv, keys.jobs());
      const after = await measureBacklog(s.ctx.kv);
      await waitUntil(
        async () => (await measureBacklog(s.ctx.kv)).pending === 0,
        180_000,
        "the backlog to drain",
      );
      assert.equal(await unsettled(s.ctx.kv), 0);
      clearInterval(sampler);

      const posted = statuses.get(201) ?? 0;
      console.log(
        `backlog: ${posted} posts in ${POSTING_MS / 1000} s, up to ${maxBacklog} jobs pending, ` +
          `${pendingAtEnd} when posting stopped, at most ${maxHeld} held in memory (window ${WINDOW})`,
      );
      assert.deepEqual([...statuses.keys()], [201], "every post was acknowledged");
      assert.ok(maxBacklog > 10 * WINDOW, `a backlog formed (up to ${maxBacklog} pending)`);
      assert.ok(maxHeld <= WINDOW, `at most ${WINDOW} jobs in memory (saw ${maxHeld})`);
      assert.ok(
        before.pending + waiting >= pendingAtEnd && pendingAtEnd + waiting >= after.pending,
        `measured ${before.pending} and ${after.pending} around a count of ${pendingAtEnd}, ` +
          `${waiting} waiting in records`,
      );
      assert.ok(before.oldestCreatedAt !== null);
      assert.deepEqual(await measureBacklog(s.ctx.kv), { pending: 0, oldestCreatedAt: null });
      const everyPost = await timeline(s.ctx.kv, general);
      assert.equal(everyPost.length + (await timeline(s.ctx.kv, quiet)).length, posted);
      for (const r of fast) {
        assert.equal(everyPost.filter((id) => !r.got.has(id)).length, 0, "none missed");
      }
      for (const id of await timeline(s.ctx.kv, quiet)) assert.ok(slow.got.has(id));
    },
    { WEBHOOKS_MAX_IN_MEMORY: String(WINDOW), WEBHOOKS_TIMEOUT: "5" },
    // Lanes that grew while their receivers succeed would keep up, and no backlog would form.
    { engine: { maxPerSubscription: 4 } },
  )
    .finally(() => Promise.all([...fast, slow].map((r) => r.close())));
});
