/**
 * Two service processes and the admin CLI on one KV file act as one service: every change made by
 * one is honoured by the others at once, contention never surfaces as a 500, each due job is
 * attempted by one process, other writers' events are delivered within about a second, and the
 * rate limit holds across instances. `INSTANCES_SCALE=long` (deno task instances) runs the same
 * with more of everything; both print their counts. `INSTANCES_POSTING_SECONDS=300` makes the
 * posting contention a soak of that length instead.
 */
import assert from "node:assert/strict";
import { postMessage } from "../domain/messages/messages.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import type { OutboxEvent } from "../core/types.ts";
import type { HandedJobs } from "../core/webhook_records.ts";
import type { Store } from "../kv/store/store.ts";
import { keys } from "../kv/keys.ts";
import { api, type ApiResponse, clearOfWindowEdge, createChannelAs, workspace } from "./harness.ts";
import { cli, type Service, sharedStore, startService } from "./processes.ts";
import {
  hmacHex,
  post,
  postCounted,
  type Receiver,
  receiver,
  sleep,
  subscribe,
} from "./webhook_receivers.ts";

const LONG = Deno.env.get("INSTANCES_SCALE") === "long";
const scale = (short: number, long: number) => LONG ? long : short;
const POSTING_SECONDS = Number(Deno.env.get("INSTANCES_POSTING_SECONDS") ?? 0);

function report(what: string, figures: Record<string, unknown>) {
  console.log(`instances: ${what}: ${JSON.stringify(figures)}`);
}

/** The v1 signatures of a delivery that verify under each secret, in header order. */
async function verifying(hit: { headers: Headers; body: string }, secrets: string[]) {
  const header = hit.headers.get("x-service-signature") ?? "";
  const t = /^t=(\d+)/.exec(header)?.[1] ?? "";
  const v1s = [...header.matchAll(/v1=([0-9a-f]{64})/g)].map((m) => m[1]);
  return await Promise.all(secrets.map(async (s) => v1s.includes(await hmacHex(s, t, hit.body))));
}

/** The event ids a receiver got, with how often each came. */
function counts(r: Receiver): Map<string, number> {
  const out = new Map<string, number>();
  for (const h of r.hits) {
    const id = JSON.parse(h.body).id;
    out.set(id, (out.get(id) ?? 0) + 1);
  }
  return out;
}

async function withInstances(
  extra: Record<string, string>,
  fn: (store: Awaited<ReturnType<typeof sharedStore>>, a: Service, b: Service) => Promise<void>,
) {
  const store = await sharedStore(extra);
  const [a, b] = await Promise.all([startService(store.env), startService(store.env)]);
  try {
    await fn(store, a, b);
  } finally {
    await Promise.all([a.kill(), b.kill()]);
    await store.cleanup();
  }
}

Deno.test("instances: a change made by one process is honoured by the others on their next request", async () => {
  const r = receiver();
  await withInstances({ WEBHOOKS_TIMEOUT: "5" }, async (store, a, b) => {
    const A = store.as(a);
    const B = store.as(b);
    const w = await workspace(store.ctx);
    const env = store.env;
    const rounds = scale(2, 20);
    let checks = 0;
    let stale = 0;
    const expect = (what: string, res: ApiResponse, status: number) => {
      checks++;
      if (res.status !== status) {
        stale++;
        console.error(`stale: ${what}: ${res.status} (wanted ${status})`);
      }
    };

    for (let round = 0; round < rounds; round++) {
      // Tokens: revoked and rotated through the CLI, refused by both instances at once.
      const user = w.member.user.id;
      const made = await cli(env, "token:create", "--user", user, "--scopes", "all");
      expect("fresh token on A", await api(A, "GET", "/channels", { token: made.token }), 200);
      expect("fresh token on B", await api(B, "GET", "/channels", { token: made.token }), 200);
      const rotated = await cli(env, "token:rotate", "--id", made.id);
      expect(
        "rotated-out token on A",
        await api(A, "GET", "/channels", { token: made.token }),
        401,
      );
      expect(
        "rotated-in token on B",
        await api(B, "GET", "/channels", { token: rotated.token }),
        200,
      );
      await cli(env, "token:revoke", "--id", rotated.id);
      expect("revoked token on A", await api(A, "GET", "/channels", { token: rotated.token }), 401);
      expect("revoked token on B", await api(B, "GET", "/channels", { token: rotated.token }), 401);

      // Archive on B, post on A; unarchive on A, post on B.
      const room = await createChannelAs(A, w.admin.token, `room ${round}`, "private");
      const path = `/channels/${room}`;
      expect(
        "archive on B",
        await api(B, "POST", `${path}/archive`, { token: w.admin.token }),
        200,
      );
      expect(
        "post on A into what B archived",
        await api(A, "POST", `${path}/messages`, { token: w.admin.token, body: { body: "x" } }),
        403,
      );
      expect(
        "unarchive on A",
        await api(A, "POST", `${path}/unarchive`, { token: w.admin.token }),
        200,
      );
      expect(
        "post on B into what A unarchived",
        await api(B, "POST", `${path}/messages`, { token: w.admin.token, body: { body: "x" } }),
        201,
      );

      // Membership: added by the CLI, removed through B, each seen by A at once.
      expect("outsider on A", await api(A, "GET", path, { token: w.member.token }), 404);
      await cli(env, "member:add", "--channel", room, "--user", user);
      expect(
        "member added by the CLI, on A",
        await api(A, "GET", path, { token: w.member.token }),
        200,
      );
      expect(
        "removed through B",
        await api(B, "DELETE", `${path}/members/${user}`, { token: w.admin.token }),
        204,
      );
      expect(
        "member removed through B, on A",
        await api(A, "GET", path, { token: w.member.token }),
        404,
      );

      // Custom emoji made by the CLI, usable on A at once.
      const message = await post(A, w.admin.token, w.team.general_channel_id, `emoji ${round}`);
      await cli(env, "emoji:create", "--team", w.team.id, "--name", `party${round}`);
      expect(
        "new custom emoji on A",
        await api(
          A,
          "PUT",
          `/channels/${w.team.general_channel_id}/messages/${message.id}/reactions/:party${round}:`,
          { token: w.admin.token },
        ),
        204,
      );

      // Subscriptions: rotated by the CLI, then both signatures on A's next delivery; deleted
      // through B, then nothing more from A.
      const sub = await subscribe(B, w.admin.token, r.url, { name: `hook ${round}` });
      const rotation = await cli(env, "webhook:rotate-secret", "--id", sub.id);
      const seen = r.hits.length;
      await post(A, w.admin.token, w.team.general_channel_id, `rotated ${round}`);
      const hit = (await r.waitFor(seen + 1))[seen];
      checks++;
      const [withNew, withOld] = await verifying(hit, [rotation.secret, sub.secret]);
      if (!withNew || !withOld) {
        stale++;
        console.error(`stale: rotation on A: new ${withNew}, old ${withOld}`);
      }
      expect(
        "delete on B",
        await api(B, "DELETE", `/webhooks/${sub.id}`, { token: w.admin.token }),
        204,
      );
      const after = await post(A, w.admin.token, w.team.general_channel_id, `deleted ${round}`);
      checks++;
      if (await routedTo(store.ctx.kv, sub.id, after.id)) {
        stale++;
        console.error("stale: A routed an event to a subscription B deleted");
      }
    }
    // Anything still in flight for a deleted subscription would arrive now.
    await sleep(300);
    checks++;
    const deliveredAfterDelete = r.hits.filter((h) => /deleted \d+/.test(h.body)).length;
    if (deliveredAfterDelete > 0) stale++;
    report("staleness after changes", { rounds, checks, stale });
    assert.equal(stale, 0);
  }).finally(() => r.close());
});

Deno.test("instances: two instances posting into one channel never answer 500", async () => {
  // A soak posts more in a minute than the suite's rate limit allows one token.
  const limit: Record<string, string> = POSTING_SECONDS > 0
    ? { INTEGRATIONS_API_RATE_LIMIT: "100000000" }
    : {};
  await withInstances(limit, async (store, a, b) => {
    const w = await workspace(store.ctx);
    const perInstance = scale(300, 3_000);
    const until = POSTING_SECONDS > 0 ? Date.now() + POSTING_SECONDS * 1_000 : Infinity;
    const more = (i: number) => POSTING_SECONDS > 0 ? Date.now() < until : i < perInstance;
    const clients = 16;
    const statuses = new Map<number, number>();
    const hammer = async (s: Service) => {
      const took: number[] = [];
      await Promise.all(Array.from({ length: clients }, async (_, c) => {
        for (let i = c; more(i); i += clients) {
          const general = w.team.general_channel_id;
          const t0 = performance.now();
          await postCounted(s.url, w.admin.token, general, `post ${i}`, statuses);
          took.push(performance.now() - t0);
        }
      }));
      took.sort((x, y) => x - y);
      return {
        posts: took.length,
        p50: took[Math.floor(took.length / 2)],
        p99: took[Math.floor(took.length * 0.99)],
      };
    };
    const started = Date.now();
    const [onA, onB] = await Promise.all([hammer(a), hammer(b)]);
    const seconds = (Date.now() - started) / 1000;
    const posts = onA.posts + onB.posts;
    const created = statuses.get(201) ?? 0;
    const len = (await store.ctx.kv.get<Deno.KvU64>(keys.timelineLen(w.team.general_channel_id)))
      .value;
    report("posting contention", {
      posts,
      per_instance: [onA.posts, onB.posts],
      statuses: Object.fromEntries(statuses),
      posts_per_s: Math.round(posts / seconds),
      p50_ms: [onA.p50, onB.p50].map(Math.round),
      p99_ms: [onA.p99, onB.p99].map(Math.round),
    });
    assert.equal(statuses.get(500) ?? 0, 0, "no 500s");
    assert.equal(created, posts, "every post landed: no 503");
    // Neither waits out the other: a starved instance's posts took seconds (the 503 deadline).
    for (const { p99 } of [onA, onB]) assert.ok(p99 < 1_000, `p99 ${Math.round(p99)} ms`);
    assert.equal(Number(len?.value ?? 0n), created, "positions are dense: one per post");
  });
});

Deno.test("instances: two engines deliver each event once", async () => {
  // Slow receivers keep attempts in flight while both engines look for work; one per
  // subscription, so that a second arrival of an event at one is a duplicate.
  const slow = () =>
    receiver(async () => {
      await sleep(50);
      return new Response("ok");
    });
  const rs = [slow(), slow()];
  await withInstances({ WEBHOOKS_TIMEOUT: "5" }, async (store, a, b) => {
    const w = await workspace(store.ctx);
    await subscribe(store.as(a), w.admin.token, rs[0].url, { name: "one" });
    await subscribe(store.as(b), w.admin.token, rs[1].url, { name: "two" });
    const subject = await authenticate(store.ctx, w.admin.token);
    const general = w.team.general_channel_id;
    const each = scale(60, 400);
    const written = new Set<string>();
    // This process writes like the CLI does: no engine of its own, so both instances race for
    // its jobs. The instances' own posts are leased to them in their commits.
    const outside = (async () => {
      for (let i = 0; i < each; i++) {
        const { message } = await postMessage(store.ctx, subject, general, {
          ok: true,
          value: { body: `outside ${i}` },
        });
        written.add(message.id);
        await sleep(5);
      }
    })();
    const inside = Promise.all([a, b].map(async (s) => {
      for (let i = 0; i < each; i++) {
        written.add((await post(store.as(s), w.admin.token, general, `inside ${i}`)).id);
      }
    }));
    await Promise.all([outside, inside]);
    const events = written.size;
    for (const r of rs) await r.waitFor(events, 60_000);
    await sleep(500);
    const got = rs.map(counts);
    const duplicates = got.flatMap((m) => [...m.values()]).reduce((n, c) => n + c - 1, 0);
    report("duplicates across two engines", {
      events,
      deliveries: rs.reduce((n, r) => n + r.hits.length, 0),
      expected: events * 2,
      duplicates,
    });
    for (const m of got) assert.equal(m.size, events, "every event was delivered");
    // Both engines record attempts of one subscription: a lost record would send its event again.
    assert.equal(duplicates, 0, "no event sent twice without a crash");
  }).finally(() => Promise.all(rs.map((r) => r.close())));
});

Deno.test("instances: events another process writes are delivered within about a second", async () => {
  const r = receiver();
  await withInstances({}, async (store, a) => {
    const w = await workspace(store.ctx);
    await subscribe(store.as(a), w.admin.token, r.url, {
      events: ["message.created", "channel.member_added"],
    });
    const subject = await authenticate(store.ctx, w.admin.token);
    // Written by this process, which runs no engine: as the CLI writes.
    for (let i = 0; i < scale(50, 500); i++) {
      await postMessage(store.ctx, subject, w.team.general_channel_id, {
        ok: true,
        value: { body: `outside ${i}` },
      });
      await sleep(20);
    }
    // And by the CLI itself: a member added writes two events.
    const room = await createChannelAs(store.as(a), w.admin.token, "cli room", "private");
    for (let i = 0; i < scale(2, 10); i++) {
      const bot = await cli(store.env, "bot:create", "--team", w.team.id, "--name", `bot ${i}`);
      await cli(store.env, "member:add", "--channel", room, "--user", bot.id);
    }
    const expected = scale(50, 500) + scale(2, 10) * 2;
    await r.waitFor(expected, 10_000);
    const latencies = r.hits.map((h) => h.at - Date.parse(JSON.parse(h.body).created_at))
      .sort((x, y) => x - y);
    const p = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    report("delivery latency of another writer's events", {
      events: latencies.length,
      p50_ms: p(0.5),
      p99_ms: p(0.99),
      max_ms: latencies.at(-1),
    });
    assert.ok(p(0.99) < 2_000, `p99 ${p(0.99)} ms`);
  }).finally(() => r.close());
});

Deno.test("instances: the rate limit holds across two instances", async () => {
  await clearOfWindowEdge(15_000);
  await withInstances({ INTEGRATIONS_API_RATE_LIMIT: "60" }, async (store, a, b) => {
    const w = await workspace(store.ctx);
    const perInstance = scale(100, 300);
    const fire = (s: Service) =>
      Promise.all(Array.from({ length: perInstance }, async () => {
        const res = await fetch(`${s.url}/api/v1/channels`, {
          headers: { Authorization: `Bearer ${w.admin.token}` },
        });
        await res.body?.cancel();
        return res.status;
      }));
    const statuses = (await Promise.all([fire(a), fire(b)])).flat();
    const admitted = statuses.filter((s) => s === 200).length;
    report("rate limit across instances", {
      limit: 60,
      requests: statuses.length,
      admitted,
      refused: statuses.filter((s) => s === 429).length,
    });
    assert.ok(admitted <= 66, `${admitted} admitted`);
    assert.ok(admitted >= 54, `${admitted} admitted: the limit is not wasted`);
    assert.equal(statuses.filter((s) => s !== 200 && s !== 429).length, 0);
  });
});

/**
 * Whether the event of message `messageId` was routed to subscription `subscriptionId`, as far as
 * its jobs still show: a job row, or a first attempt in its handed-jobs record (an engine that
 * took the job since has dropped it, its subscription being gone, so a miss proves nothing).
 */
async function routedTo(kv: Store, subscriptionId: string, messageId: string) {
  const ids = new Set<string>();
  for await (const e of kv.list<OutboxEvent>({ prefix: keys.events() })) {
    if ((e.value.data as { id?: string }).id === messageId) ids.add(e.value.id);
  }
  for await (const e of kv.list({ prefix: keys.jobs(subscriptionId) })) {
    if (ids.has(String(e.key.at(-1)))) return true;
  }
  for await (const e of kv.list<HandedJobs>({ prefix: keys.handedJobs() })) {
    const { event_id, pending } = e.value;
    if (ids.has(event_id) && pending.some((p) => p.subscription_id === subscriptionId)) return true;
  }
  return false;
}
