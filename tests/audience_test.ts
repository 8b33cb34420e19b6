/**
 * Who a subscription hears: only events of channels its owner (the user whose token created it)
 * can see at the moment the event is written.
 */
import assert from "node:assert/strict";
import { createDirectChannel } from "../domain/channels/channels.ts";
import type { OutboxEvent } from "../core/types.ts";
import type { Subscription } from "../core/webhook_records.ts";
import { keys } from "../kv/keys.ts";
import type { WebhookRoute } from "../core/webhook_records.ts";
import {
  actor,
  api,
  assertStatus,
  createChannelAs,
  type TestServer,
  withWorkspace,
  type Workspace,
} from "./harness.ts";
import { FAST, post, type Receiver, receiver, subscribe } from "./webhook_receivers.ts";

const ALL_EVENTS = [
  "message.created",
  "message.updated",
  "message.deleted",
  "reaction.added",
  "channel.member_added",
];

/**
 * A workspace with no delivery engine, and a receiver to subscribe: each subscription an event is
 * routed to gets a job row that stays, so the rows say who heard what.
 */
function withReceiver(fn: (s: TestServer, w: Workspace, r: Receiver) => Promise<void>) {
  const r = receiver();
  return withWorkspace((s, w) => fn(s, w, r), FAST).finally(() => r.close());
}

/** Every event written so far, oldest first. */
async function events(s: TestServer): Promise<OutboxEvent[]> {
  const out: OutboxEvent[] = [];
  for await (const e of s.ctx.kv.list<OutboxEvent>({ prefix: keys.events() })) out.push(e.value);
  return out;
}

/** The events written since `seen` events, as `type@channel` per subscription that got them. */
async function heardSince(s: TestServer, seen: number, subs: Record<string, string>) {
  const names = Object.fromEntries(Object.entries(subs).map(([name, id]) => [id, name]));
  const out: Record<string, string[]> = Object.fromEntries(Object.keys(subs).map((n) => [n, []]));
  const jobs = new Set<string>();
  for (const id of Object.values(subs)) {
    for await (const e of s.ctx.kv.list({ prefix: keys.jobs(id) })) jobs.add(e.key.join("|"));
  }
  for (const e of (await events(s)).slice(seen)) {
    for (const id of Object.values(subs)) {
      const job = keys.job(id, e.id).join("|");
      if (jobs.has(job)) out[names[id]].push(`${e.type}@${e.channel_id}`);
    }
  }
  return out;
}

Deno.test("audience: workspace-wide subscriptions hear only channels their owner can see", async () => {
  await withReceiver(
    async (s, w, r) => {
      const subs = {
        member: (await subscribe(s, w.member.token, r.url, { events: ALL_EVENTS })).id,
        bot: (await subscribe(s, w.bot.token, r.url, { events: ALL_EVENTS })).id,
        admin: (await subscribe(s, w.admin.token, r.url, { events: ALL_EVENTS })).id,
      };
      const outsider = await actor(s.ctx, w.team, "Oscar Outsider", "admin");
      const secret = await createChannelAs(s, outsider.token, "secret", "private");
      const dm = await createDirectChannel(s.ctx, [outsider.user, w.member.user]);
      const general = w.team.general_channel_id;
      const seen = (await events(s)).length;

      await post(s, outsider.token, secret, "private talk");
      await post(s, outsider.token, dm.id, "just us two");
      await post(s, outsider.token, general, "hello everyone");
      const heard = await heardSince(s, seen, subs);
      assert.deepEqual(heard.member, [`message.created@${dm.id}`, `message.created@${general}`]);
      assert.deepEqual(heard.bot, [], "a bot hears only channels it is in; it is in none");
      assert.deepEqual(heard.admin, [`message.created@${general}`], "admins get no exception");
    },
  );
});

Deno.test("audience: joining starts a channel's events, leaving stops them", async () => {
  await withReceiver(
    async (s, w, r) => {
      const subs = {
        member: (await subscribe(s, w.member.token, r.url, { events: ALL_EVENTS })).id,
        bot: (await subscribe(s, w.bot.token, r.url, { events: ALL_EVENTS })).id,
      };
      const room = await createChannelAs(s, w.admin.token, "room", "private");
      let seen = (await events(s)).length;
      const before = await post(s, w.admin.token, room, "before anyone joins");
      assert.deepEqual(await heardSince(s, seen, subs), { member: [], bot: [] });

      for (const who of [w.member, w.bot]) {
        const res = await api(s, "POST", `/channels/${room}/members`, {
          token: w.admin.token,
          body: { user_id: who.user.id },
        });
        assertStatus(res, 201);
      }
      seen = (await events(s)).length;
      await post(s, w.admin.token, room, "now you are in");
      const edited = await api(s, "PATCH", `/channels/${room}/messages/${before.id}`, {
        token: w.admin.token,
        body: { body: "edited" },
      });
      assertStatus(edited, 200);
      const react = await api(s, "PUT", `/channels/${room}/messages/${before.id}/reactions/👍`, {
        token: w.admin.token,
      });
      assertStatus(react, 204);
      const inRoom = [
        `message.created@${room}`,
        `message.updated@${room}`,
        `reaction.added@${room}`,
      ];
      assert.deepEqual(await heardSince(s, seen, subs), { member: inRoom, bot: inRoom });

      for (const who of [w.member, w.bot]) {
        const res = await api(s, "DELETE", `/channels/${room}/members/${who.user.id}`, {
          token: who.token,
        });
        assertStatus(res, 204);
      }
      seen = (await events(s)).length;
      await post(s, w.admin.token, room, "after they left");
      const gone = await api(s, "DELETE", `/channels/${room}/messages/${before.id}`, {
        token: w.admin.token,
      });
      assertStatus(gone, 204);
      assert.deepEqual(await heardSince(s, seen, subs), { member: [], bot: [] });
    },
  );
});

Deno.test("audience: a user hears its own joining, not its own leaving", async () => {
  await withReceiver(
    async (s, w, r) => {
      const subs = { bot: (await subscribe(s, w.bot.token, r.url, { events: ALL_EVENTS })).id };
      const room = await createChannelAs(s, w.admin.token, "room", "private");
      let seen = (await events(s)).length;
      const add = await api(s, "POST", `/channels/${room}/members`, {
        token: w.admin.token,
        body: { user_id: w.bot.user.id },
      });
      assertStatus(add, 201);
      assert.deepEqual((await heardSince(s, seen, subs)).bot, [
        `channel.member_added@${room}`,
        `message.created@${room}`,
      ]);
      seen = (await events(s)).length;
      const leave = await api(s, "DELETE", `/channels/${room}/members/${w.bot.user.id}`, {
        token: w.bot.token,
      });
      assertStatus(leave, 204);
      assert.deepEqual((await heardSince(s, seen, subs)).bot, []);
    },
  );
});

Deno.test("audience: a hidden channel id is refused exactly like an unknown one", async () => {
  await withWorkspace(async (s, w) => {
    const hidden = await createChannelAs(s, w.admin.token, "hidden", "private");
    const dm = await createDirectChannel(s.ctx, [w.admin.user, w.bot.user]);
    const create = (token: string, channelId: string) =>
      api(s, "POST", "/webhooks", {
        token,
        body: {
          name: "probe",
          url: "http://127.0.0.1:9/hook",
          events: ["message.created"],
          channel_ids: [channelId],
        },
      });
    const unknown = await create(w.member.token, crypto.randomUUID());
    assert.equal(unknown.status, 422);
    for (const [token, id] of [[w.member.token, hidden], [w.member.token, dm.id]]) {
      const res = await create(token, id);
      assert.equal(res.status, unknown.status);
      assert.deepEqual(res.body, unknown.body);
    }
    // The general channel is public: a member sees it, a bot that is not in it does not.
    assertStatus(await create(w.member.token, w.team.general_channel_id), 201);
    assert.deepEqual((await create(w.bot.token, w.team.general_channel_id)).body, unknown.body);
    assertStatus(await create(w.admin.token, hidden), 201);
  });
});

Deno.test("audience: subscriptions made before owners were kept follow the same rule", async () => {
  await withReceiver(
    async (s, w, r) => {
      const id = (await subscribe(s, w.bot.token, r.url)).id;
      // As stored before this change: no owner on the route, no owner type on the subscription.
      const sub = { ...(await s.ctx.kv.get<Subscription>(keys.webhook(id))).value! };
      const route = {
        ...(await s.ctx.kv.get<WebhookRoute>(keys.teamWebhook(w.team.id, id))).value!,
      };
      delete sub.owner_type;
      delete route.owner;
      await s.ctx.kv.atomic()
        .set(keys.webhook(id), sub)
        .set(keys.teamWebhook(w.team.id, id), route)
        .set(keys.routesVersion(w.team.id), Date.now())
        .commit();
      const seen = (await events(s)).length;
      await post(s, w.admin.token, w.team.general_channel_id, "the bot is not in general");
      const room = await createChannelAs(s, w.bot.token, "bots-room", "public");
      await post(s, w.bot.token, room, "the bot is in here");
      assert.deepEqual((await heardSince(s, seen, { bot: id })).bot, [`message.created@${room}`]);
    },
  );
});
