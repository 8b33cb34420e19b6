/**
 * Bursts of posts into a channel that 100 subscriptions hear, round after round: each round is
 * delivered in full by the engine's own pulls, never left for a sweep or a cron run, and once
 * it is, the engine holds nothing (no room promised to work that never came). Issue 33's stall.
 */
import assert from "node:assert/strict";
import { appendBatchesSplit, deliveryStalls } from "../core/metrics.ts";
import { measureBacklog } from "../kv/outbox/backlog.ts";
import { actor, type TestServer, withWorkspace, type Workspace } from "./harness.ts";
import { keys } from "../kv/keys.ts";
import { postCounted, receiver, sleep, subscribe, waitUntil } from "./webhook_receivers.ts";

const SUBSCRIPTIONS = 100;
const PER_OWNER = 25;
const ROUNDS = 8;
const BURST = 12;
/** Well inside the engine's 30 s sweep: a round delivered later waited for one. */
const ROUND_LIMIT_MS = 20_000;

/** SUBSCRIPTIONS subscriptions to `channel`, spread over humans: each may own only so many. */
async function subscribeMany(s: TestServer, w: Workspace, channel: string, url: string) {
  const owners = [w.admin, w.member];
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    if (i >= owners.length * PER_OWNER) {
      owners.push(await actor(s.ctx, w.team, `Owner ${owners.length}`, "member"));
    }
    await subscribe(s, owners[Math.floor(i / PER_OWNER)].token, `${url}?s=${i}`, {
      channel_ids: [channel],
      name: `hook ${i}`,
    });
  }
}

Deno.test("bursts into 100 subscriptions: every round delivered without a sweep or cron", async () => {
  // Answers within 40 ms, some slower than others: lanes finish out of step and keep the
  // window full, so pulls go on from where the last stopped (with the old double scan, room was
  // promised twice to the same job and never all given back: the window filled for good).
  const hook = receiver(async (n) => {
    await sleep(n % 40);
    return new Response(null, { status: 204 });
  });
  const stallsBefore = (await deliveryStalls.get()).values[0]?.value ?? 0;
  await withWorkspace(
    async (s, w) => {
      const channel = w.team.general_channel_id;
      await subscribeMany(s, w, channel, hook.url);
      const statuses = new Map<number, number>();
      const slowest: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const started = Date.now();
        await Promise.all(
          Array.from(
            { length: BURST },
            (_, i) => postCounted(s.url, w.admin.token, channel, `r${round} p${i}`, statuses),
          ),
        );
        const expected = (round + 1) * BURST * SUBSCRIPTIONS;
        await waitUntil(
          () => hook.hits.length >= expected,
          ROUND_LIMIT_MS,
          () =>
            `round ${round}: ${expected} deliveries (got ${hook.hits.length}, ${
              s.engine!.held()
            } held)`,
        );
        slowest.push(Date.now() - started);
        await waitUntil(() => s.engine!.held() === 0, 5_000, `round ${round}: the window empty`);
        // A pause between bursts, of a different length each time, as bursty traffic has.
        await sleep(50 + 150 * (round % 3));
      }
      assert.deepEqual([...statuses.keys()], [201]);
      assert.equal(hook.hits.length, ROUNDS * BURST * SUBSCRIPTIONS, "each delivered once");
      assert.equal((await measureBacklog(s.ctx.kv)).pending, 0);
      const stalls = ((await deliveryStalls.get()).values[0]?.value ?? 0) - stallsBefore;
      assert.equal(stalls, 0, "the engine's own watch saw no stall");
      console.log(`bursts: rounds delivered in ${slowest.join(", ")} ms`);
    },
    // A window smaller than the 100 lanes could hold, so pulls meet a full window often.
    { WEBHOOKS_MAX_IN_MEMORY: "300" },
    { engine: { stallCheckEveryMs: 500 } },
  ).finally(() => hook.close());
});

Deno.test("concurrent posts that 100 subscriptions hear share commits within every limit", async () => {
  const splits = async () => (await appendBatchesSplit.get()).values[0]?.value ?? 0;
  const before = await splits();
  await withWorkspace(async (s, w) => {
    const channel = w.team.general_channel_id;
    await subscribeMany(s, w, channel, "http://127.0.0.1:9/hook");
    const statuses = new Map<number, number>();
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        Array.from(
          { length: 32 },
          (_, i) => postCounted(s.url, w.admin.token, channel, `r${round} p${i}`, statuses),
        ),
      );
    }
    assert.deepEqual([...statuses.entries()], [[201, 160]]);
    // Each commit of the stream log holds one batch: fewer commits than posts means they shared.
    const commits = new Set<string>();
    for await (const e of s.ctx.kv.list({ prefix: keys.teamStream(w.team.id) })) {
      commits.add(e.key[2] as string);
    }
    assert.ok(commits.size < 160, `${commits.size} commits for 160 posts`);
  });
  assert.equal(await splits(), before, "no batch went over a limit and was split");
});
