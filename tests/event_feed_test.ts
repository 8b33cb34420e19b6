/**
 * The event feed reads what its reader may see (issue 33), and a position in it never leaks or
 * skips (decisions.md, "Resuming past the horizon"): it merges the team's open events with the
 * reader's closed channels (a bot's: its channels), its cursors name only events the reader
 * sees, and a position past the 30-day horizon is a 410.
 */
import assert from "node:assert/strict";
import { createDirectChannel } from "../domain/channels/channels.ts";
import { FEED_LAG_MS } from "../domain/stream/feed.ts";
import { newId } from "../core/ids.ts";

/** An id as one made at `ms` would be (newId never goes back in time). */
const idAt = (ms: number) => {
  const hex = ms.toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8)}${newId().slice(13)}`;
};
import { keys } from "../kv/keys.ts";
import { LAYOUT_VERSION, migrate } from "../kv/store/migrations.ts";
import {
  type Actor,
  api,
  assertStatus,
  createChannelAs,
  storeEntries,
  type TestServer,
  withWorkspace,
} from "./harness.ts";
import { post, sleep } from "./webhook_receivers.ts";
import type { Store } from "../kv/store/store.ts";

interface Walked {
  messages: string[];
  cursors: string[];
}

/** Every event `who` reads from the feed, pages of `limit`, and the cursors it was handed. */
async function walk(
  s: TestServer,
  who: Actor,
  limit = 2,
  query = "&types=message.created",
): Promise<Walked> {
  const walked: Walked = { messages: [], cursors: [] };
  let after: string | null = null;
  for (let more = true; more;) {
    const res = await api(
      s,
      "GET",
      `/events?limit=${limit}${query}${after ? `&after=${after}` : ""}`,
      { token: who.token },
    );
    assertStatus(res, 200);
    // Posts only: adding the bot to its room also made a `member_joined` notice.
    const bodies = res.body.data.map((e: { data: { body?: string; type?: string } }) =>
      e.data.type === "member_joined" ? "" : e.data.body
    );
    walked.messages.push(...bodies.filter(Boolean));
    after = res.body.meta.next_cursor ?? after;
    if (res.body.meta.next_cursor) walked.cursors.push(res.body.meta.next_cursor);
    more = res.body.meta.has_more;
  }
  return walked;
}

/** A team where each kind of channel has a post: public, private, a DM, and one the bot is in. */
async function postEverywhere(
  s: TestServer,
  w: Parameters<Parameters<typeof withWorkspace>[0]>[1],
) {
  const general = w.team.general_channel_id;
  const secret = await createChannelAs(s, w.admin.token, "secret", "private");
  const botRoom = await createChannelAs(s, w.admin.token, "bot-room", "public");
  assertStatus(
    await api(s, "POST", `/channels/${botRoom}/members`, {
      token: w.admin.token,
      body: { user_id: w.bot.user.id },
    }),
    201,
  );
  const dm = await createDirectChannel(s.ctx, [w.admin.user, w.member.user]);
  const hidden: string[] = [];
  for (let i = 0; i < 3; i++) {
    await post(s, w.admin.token, general, `public ${i}`);
    hidden.push((await post(s, w.admin.token, secret, `secret ${i}`)).id);
    await post(s, w.admin.token, dm.id, `dm ${i}`);
    await post(s, w.admin.token, botRoom, `bot room ${i}`);
  }
  await sleep(FEED_LAG_MS + 100);
  return { general, secret, dm, botRoom };
}

const eventIdsIn = async (kv: Store, channelId: string) =>
  (await Array.fromAsync(storeEntries(kv, keys.channelEvents(channelId)))).map((e) =>
    e.key.at(-1) as string
  );

Deno.test("event feed: each reader gets what it sees, in order, and cursors only name those", async () => {
  await withWorkspace(async (s, w) => {
    const { secret } = await postEverywhere(s, w);
    const member = await walk(s, w.member);
    assert.deepEqual(member.messages, [
      ...[0, 1, 2].flatMap((i) => [`public ${i}`, `dm ${i}`, `bot room ${i}`]),
    ]);
    const admin = await walk(s, w.admin, 3);
    assert.equal(admin.messages.length, 12, "the admin is in every channel");
    const bot = await walk(s, w.bot);
    assert.deepEqual(bot.messages, ["bot room 0", "bot room 1", "bot room 2"], "only its channel");
    const hidden = new Set(await eventIdsIn(s.ctx.kv, secret));
    for (const cursor of [...member.cursors, ...bot.cursors]) {
      assert.ok(!hidden.has(cursor), "a cursor names an event its reader can't see");
    }
  });
});

Deno.test("event feed: a position is a place in time, alike whoever's it was; past the horizon, 410", async () => {
  await withWorkspace(async (s, w) => {
    const { secret } = await postEverywhere(s, w);
    const [hiddenId] = await eventIdsIn(s.ctx.kv, secret);
    const made = (id: string) =>
      api(s, "GET", `/events?limit=100&types=message.created&after=${id}`, {
        token: w.member.token,
      });
    const afterHidden = await made(hiddenId);
    const neverMade = await made(idAt(Date.now() - 60_000));
    assertStatus(afterHidden, 200);
    assertStatus(neverMade, 200);
    assert.deepEqual(
      afterHidden.body.data.map((e: { data: { body: string } }) => e.data.body).slice(-3),
      neverMade.body.data.map((e: { data: { body: string } }) => e.data.body).slice(-3),
    );
    const old = await made(idAt(Date.now() - 31 * 86_400_000));
    assertStatus(old, 410);
    assert.match(old.body.message, /30 days/);
  });
});

Deno.test("event feed: upgrading fills the indexes for events and memberships older releases wrote", async () => {
  await withWorkspace(async (s, w) => {
    await postEverywhere(s, w);
    const before = await walk(s, w.member, 100);
    // As a release before layout 2 left the store: none of the feed's indexes by reader.
    for (const prefix of [["open_events"], ["channel_events"], ["user_closed_channels"]]) {
      for await (const e of storeEntries(s.ctx.kv, prefix)) await s.ctx.kv.delete(e.key);
    }
    await s.ctx.kv.set(keys.layout(), { version: 2, upgraded_at: new Date().toISOString() });
    assert.deepEqual((await walk(s, w.member, 100)).messages, [], "the feed reads only them");
    assert.equal(await migrate(s.ctx.kv), 2);
    assert.equal(await migrate(s.ctx.kv), LAYOUT_VERSION);
    assert.deepEqual((await walk(s, w.member, 100)).messages, before.messages, "all back");
    assert.deepEqual((await walk(s, w.bot, 100)).messages.length, 3);
  });
});

Deno.test("event feed: a bot in many channels reads its team's one index, and moves on past what it can't see", async () => {
  await withWorkspace(async (s, w) => {
    // More channels than the bot reads one by one (feed.ts TEAM_SCAN_FROM).
    const rooms: string[] = [];
    for (let i = 0; i < 34; i++) {
      const room = await createChannelAs(s, w.admin.token, `bot-room-${i}`, "public");
      const added = await api(s, "POST", `/channels/${room}/members`, {
        token: w.admin.token,
        body: { user_id: w.bot.user.id },
      });
      assertStatus(added, 201);
      rooms.push(room);
    }
    const elsewhere = await createChannelAs(s, w.admin.token, "not-the-bots", "public");
    await post(s, w.admin.token, rooms[0], "before");
    // More than a page looks at (SCAN_LIMIT): a page that sees none of them still moves on.
    for (let i = 0; i < 1_050; i++) await post(s, w.admin.token, elsewhere, `elsewhere ${i}`);
    await post(s, w.admin.token, rooms[33], "after");
    await post(s, w.admin.token, rooms[7], "last");
    await sleep(FEED_LAG_MS + 100);
    const bot = await walk(s, w.bot, 2);
    assert.deepEqual(bot.messages, ["before", "after", "last"]);
    const hidden = new Set(await eventIdsIn(s.ctx.kv, elsewhere));
    for (const cursor of bot.cursors) {
      assert.ok(!hidden.has(cursor), "a cursor names an event the bot can't see");
    }
    // The member, in all of them, reads them all: the same events as before the bot's shortcut.
    assert.equal((await walk(s, w.admin, 100)).messages.length, 1_053);
  });
});

Deno.test("event feed: meta.until says how far the feed has got, FEED_LAG_MS behind now", async () => {
  await withWorkspace(async (s, w) => {
    const before = Date.now();
    const res = await api(s, "GET", "/events?limit=5", { token: w.admin.token });
    assertStatus(res, 200);
    const until = Date.parse(res.body.meta.until);
    assert.ok(until >= before - FEED_LAG_MS - 5 && until <= Date.now() - FEED_LAG_MS + 5);
  });
});
