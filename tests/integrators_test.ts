/**
 * What integrators expect beyond the seed: changing a subscription in place, a test ping, and
 * an event feed to catch up from.
 */
import assert from "node:assert/strict";
import { postMessage } from "../domain/messages/messages.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import { FEED_LAG_MS } from "../domain/stream/feed.ts";
import { listAudit } from "../kv/audit.ts";
import {
  api,
  assertInvalid,
  assertStatus,
  createChannelAs,
  type TestServer,
  withWorkspace,
} from "./harness.ts";
import {
  FAST,
  hmacHex,
  post,
  receiver,
  show,
  sleep,
  subscribe,
  waitUntil,
} from "./webhook_receivers.ts";
import { checkEvent } from "./openapi_check.ts";

Deno.test("integrators: PATCH changes a subscription in place, with the rules of creation", async () => {
  const r = receiver();
  await withWorkspace(
    async (s, w) => {
      const sub = await subscribe(s, w.admin.token, r.url);
      await post(s, w.admin.token, w.team.general_channel_id, "before");
      await r.waitFor(1);
      await waitUntil(async () => (await show(s, w.admin.token, sub.id)).deliveries.length === 1);
      const path = `/webhooks/${sub.id}`;
      const hidden = await createChannelAs(s, w.admin.token, "hidden", "private");
      const room = await createChannelAs(s, w.member.token, "room");

      // The member's own subscription: only an owner changes what a subscription hears.
      const mine = await subscribe(s, w.member.token, r.url, { events: ["reaction.added"] });
      const unknown = crypto.randomUUID();
      const refusedUnknown = await api(s, "PATCH", `/webhooks/${mine.id}`, {
        token: w.member.token,
        body: { channel_ids: [unknown] },
      });
      assertInvalid(refusedUnknown, "channel_ids");
      const refusedHidden = await api(s, "PATCH", `/webhooks/${mine.id}`, {
        token: w.member.token,
        body: { channel_ids: [hidden] },
      });
      assert.deepEqual(refusedHidden.body, refusedUnknown.body, "hidden is refused like unknown");
      s.ctx.settings.webhooks.allowPrivateUrls = false;
      assertInvalid(
        await api(s, "PATCH", path, {
          token: w.admin.token,
          body: { url: "http://10.0.0.1/hook" },
        }),
        "url",
      );
      s.ctx.settings.webhooks.allowPrivateUrls = true;
      assertInvalid(
        await api(s, "PATCH", path, { token: w.admin.token, body: { events: [] } }),
        "events",
      );
      assertInvalid(
        await api(s, "PATCH", path, { token: w.admin.token, body: { name: "\u0000" } }),
        "name",
      );
      assertStatus(
        await api(s, "PATCH", `/webhooks/${crypto.randomUUID()}`, {
          token: w.admin.token,
          body: {},
        }),
        404,
      );

      const other = receiver();
      try {
        const res = await api(s, "PATCH", path, {
          token: w.admin.token,
          body: {
            name: "renamed",
            url: other.url,
            channel_ids: [room],
            events: ["message.created"],
          },
        });
        assertStatus(res, 200);
        assert.equal(res.body.data.name, "renamed");
        assert.equal(res.body.data.url, other.url);
        assert.deepEqual(res.body.data.channel_ids, [room]);
        assert.equal(res.body.data.status, "active");
        await post(s, w.admin.token, w.team.general_channel_id, "not in the channel list");
        await post(s, w.admin.token, room, "in the room");
        const [hit] = await other.waitFor(1);
        assert.equal(JSON.parse(hit.body).data.body, "in the room");
        // Same secret as before: the signature still verifies with it.
        const t = /t=(\d+)/.exec(hit.headers.get("x-service-signature")!)![1];
        assert.ok(
          hit.headers.get("x-service-signature")!.includes(await hmacHex(sub.secret, t, hit.body)),
        );
        // The receiver has the hit before the service records it: the record's commit follows.
        await waitUntil(async () => (await show(s, w.admin.token, sub.id)).deliveries.length >= 2);
        assert.equal(r.hits.length, 1, "the old url hears nothing more");
        const unchanged = await api(s, "PATCH", path, { token: w.admin.token, body: {} });
        assert.equal(unchanged.body.data.name, "renamed");
        const audit = await listAudit(s.ctx.kv, w.team.id, 50);
        assert.equal(audit.filter((e) => e.action === "webhook.updated").length, 1);
      } finally {
        await other.close();
      }
    },
    FAST,
    { engine: true },
  ).finally(() => r.close());
});

Deno.test("integrators: a test of any event type sends a sample of it, as the webhooks section describes", async () => {
  const r = receiver();
  await withWorkspace(
    async (s, w) => {
      const sub = await subscribe(s, w.admin.token, r.url);
      const types = [
        "message.created",
        "message.updated",
        "message.deleted",
        "reaction.added",
        "channel.member_added",
        "poll.vote_added",
        "poll.vote_removed",
        "poll.closed",
      ];
      for (const event_type of types) {
        const res = await api(s, "POST", `/webhooks/${sub.id}/test`, {
          token: w.admin.token,
          body: { event_type },
        });
        assertStatus(res, 202);
        assert.match(res.body.message, new RegExp(`sample ${event_type.replace(".", "\\.")}`));
      }
      const hits = await r.waitFor(types.length);
      for (const hit of hits) {
        const envelope = JSON.parse(hit.body);
        assert.equal(hit.headers.get("x-service-event"), envelope.type);
        checkEvent(envelope);
      }
      assert.deepEqual(hits.map((h) => JSON.parse(h.body).type).sort(), types.toSorted());
      assertInvalid(
        await api(s, "POST", `/webhooks/${sub.id}/test`, {
          token: w.admin.token,
          body: { event_type: "message.exploded" },
        }),
        "event_type",
      );
    },
    FAST,
    { engine: true },
  ).finally(() => r.close());
});

Deno.test("integrators: a test ping is sent, signed and recorded like any attempt", async () => {
  const r = receiver();
  await withWorkspace(
    async (s, w) => {
      const sub = await subscribe(s, w.admin.token, r.url);
      const res = await api(s, "POST", `/webhooks/${sub.id}/test`, { token: w.admin.token });
      assertStatus(res, 202);
      const [hit] = await r.waitFor(1);
      const envelope = JSON.parse(hit.body);
      assert.equal(envelope.type, "ping");
      assert.equal(envelope.id, res.body.event_id);
      assert.deepEqual(envelope.data, { subscription_id: sub.id });
      assert.equal(hit.headers.get("x-service-event"), "ping");
      const t = /t=(\d+)/.exec(hit.headers.get("x-service-signature")!)![1];
      assert.ok(
        hit.headers.get("x-service-signature")!.includes(await hmacHex(sub.secret, t, hit.body)),
      );
      await waitUntil(async () => (await show(s, w.admin.token, sub.id)).deliveries.length === 1);
      const [delivery] = (await show(s, w.admin.token, sub.id)).deliveries;
      assert.equal(delivery.event_type, "ping");
      assert.equal(delivery.succeeded, true);
      assertStatus(
        await api(s, "POST", `/webhooks/${crypto.randomUUID()}/test`, { token: w.admin.token }),
        404,
      );
    },
    FAST,
    { engine: true },
  ).finally(() => r.close());
});

/** Walks the feed from the start as `token`, `after` page by page, until it has caught up. */
async function walk(s: TestServer, token: string, query = "", limit = 7) {
  const seen: { id: string; type: string; data: { body?: string; channel_id?: string } }[] = [];
  let after = "";
  for (let pages = 0; pages < 1000; pages++) {
    const res = await api(
      s,
      "GET",
      `/events?limit=${limit}${query}${after ? `&after=${after}` : ""}`,
      {
        token,
      },
    );
    assertStatus(res, 200);
    seen.push(...res.body.data);
    if (res.body.meta.next_cursor) after = res.body.meta.next_cursor;
    if (!res.body.meta.has_more) break;
  }
  return { seen, after };
}

Deno.test("integrators: the event feed, walked while events are written, misses and repeats nothing", async () => {
  await withWorkspace(async (s, w) => {
    const secret = await createChannelAs(s, w.admin.token, "secret", "private");
    const subject = await authenticate(s.ctx, w.admin.token);
    const posted: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const where = i % 5 === 0 ? secret : w.team.general_channel_id;
        const { message } = await postMessage(s.ctx, subject, where, {
          ok: true,
          value: { body: `m${i}` },
        });
        if (where !== secret) posted.push(message.id);
        await sleep(5);
      }
    })();
    const ids = new Set<string>();
    const seen: string[] = [];
    let after = "";
    // Long enough for the hold-back to pass while writes go on.
    const until = Date.now() + FEED_LAG_MS + 3_000;
    while (Date.now() < until) {
      const res = await api(s, "GET", `/events?limit=5${after ? `&after=${after}` : ""}`, {
        token: w.member.token,
      });
      assertStatus(res, 200);
      for (const e of res.body.data) {
        assert.ok(!ids.has(e.id), "an event came twice");
        ids.add(e.id);
        seen.push(e.data.id);
        assert.notEqual(e.data.channel_id, secret, "a member sees no private channel it is not in");
      }
      if (res.body.meta.next_cursor) after = res.body.meta.next_cursor;
      await sleep(20);
    }
    writing = false;
    await writer;
    // Everything written is ready once the hold-back has passed: the walk goes on to the end.
    await sleep(FEED_LAG_MS + 100);
    for (let more = true; more;) {
      const res = await api(s, "GET", `/events?limit=50${after ? `&after=${after}` : ""}`, {
        token: w.member.token,
      });
      for (const e of res.body.data) {
        assert.ok(!ids.has(e.id));
        ids.add(e.id);
        seen.push(e.data.id);
      }
      after = res.body.meta.next_cursor ?? after;
      more = res.body.meta.has_more;
    }
    assert.deepEqual(seen, posted, "every public post, in order, once");
  });
});

Deno.test("integrators: the feed holds what webhooks deliver, filtered by type and channel", async () => {
  const r = receiver();
  await withWorkspace(
    async (s, w) => {
      await subscribe(s, w.admin.token, r.url, { events: ["message.created", "reaction.added"] });
      const room = await createChannelAs(s, w.admin.token, "room");
      const m = await post(s, w.admin.token, room, "hello");
      assertStatus(
        await api(
          s,
          "PUT",
          `/channels/${room}/messages/${m.id}/reactions/${encodeURIComponent("👍")}`,
          {
            token: w.admin.token,
          },
        ),
        204,
      );
      await r.waitFor(2);
      await sleep(FEED_LAG_MS + 100);
      const { seen } = await walk(s, w.admin.token, `&channel_id=${room}`);
      const delivered = r.hits.map((h) => JSON.parse(h.body));
      assert.deepEqual(seen, delivered, "the same envelopes, ids included");
      const reactions = await walk(s, w.admin.token, "&types=reaction.added");
      assert.deepEqual(reactions.seen.map((e) => e.type), ["reaction.added"]);
      assertInvalid(await api(s, "GET", "/events?types=nope", { token: w.admin.token }), "types");
      assertInvalid(await api(s, "GET", "/events?after=nope", { token: w.admin.token }), "after");
      assertInvalid(await api(s, "GET", "/events?limit=0", { token: w.admin.token }), "limit");
      const hidden = await createChannelAs(s, w.admin.token, "hidden", "private");
      assertStatus(
        await api(s, "GET", `/events?channel_id=${hidden}`, { token: w.member.token }),
        404,
      );
    },
    FAST,
    { engine: true },
  ).finally(() => r.close());
});

Deno.test("integrators: recover after an outage re-sends exactly the events that failed, in order", async () => {
  let down = true;
  const r = receiver(() => new Response(null, { status: down ? 503 : 204 }));
  await withWorkspace(
    async (s, w) => {
      const sub = await subscribe(s, w.admin.token, r.url);
      const since = new Date(Date.now() - 1_000).toISOString();
      const during: string[] = [];
      for (let i = 0; i < 5; i++) {
        during.push((await post(s, w.admin.token, w.team.general_channel_id, `outage ${i}`)).id);
      }
      // Each event: 2 attempts, both failed.
      const recorded = (n: number) =>
        waitUntil(
          async () => (await show(s, w.admin.token, sub.id)).deliveries.length === n,
          20_000,
        );
      await recorded(10);
      down = false;
      const after = await post(s, w.admin.token, w.team.general_channel_id, "back up");
      await recorded(11);
      const seen = r.hits.length;

      const res = await api(s, "POST", `/webhooks/${sub.id}/recover`, {
        token: w.admin.token,
        body: { since },
      });
      assertStatus(res, 202);
      assert.equal(res.body.events, 5);
      await r.waitFor(seen + 5);
      await sleep(300);
      const resent = r.hits.slice(seen).map((h) => JSON.parse(h.body).data.id);
      assert.deepEqual(resent, during, "exactly the failed events, in event order");
      assert.ok(!resent.includes(after.id));
      await recorded(16);
      // Delivered now: a second recover has nothing to send.
      const again = await api(s, "POST", `/webhooks/${sub.id}/recover`, {
        token: w.admin.token,
        body: { since },
      });
      assert.equal(again.body.events, 0);
      const old = new Date(Date.now() - 8 * 24 * 3_600_000).toISOString();
      // (WEBHOOKS_DISABLE_AFTER is high below: the owner's warning at half of it would be one more
      // message, and one more event, than this test counts.)
      assertInvalid(
        await api(s, "POST", `/webhooks/${sub.id}/recover`, {
          token: w.admin.token,
          body: { since: old },
        }),
        "since",
      );
      assertInvalid(
        await api(s, "POST", `/webhooks/${sub.id}/recover`, { token: w.admin.token, body: {} }),
        "since",
      );
    },
    { ...FAST, WEBHOOKS_MAX_ATTEMPTS: "2", WEBHOOKS_DISABLE_AFTER: "100" },
    { engine: { perSubscription: 1 } },
  )
    .finally(() => r.close());
});
