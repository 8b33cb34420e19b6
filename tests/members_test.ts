import assert from "node:assert/strict";
import { createDirectChannel } from "../domain/channels/channels.ts";
import type { Message, OutboxEvent } from "../core/types.ts";
import { keys } from "../kv/keys.ts";
import {
  actor,
  api,
  assertInvalid,
  assertStatus,
  countKeys,
  createChannelAs,
  type TestServer,
  withWorkspace,
  workspace,
} from "./harness.ts";

const add = (s: TestServer, token: string, channelId: string, userId: unknown) =>
  api(s, "POST", `/channels/${channelId}/members`, { token, body: { user_id: userId } });

const remove = (s: TestServer, token: string, channelId: string, userId: string) =>
  api(s, "DELETE", `/channels/${channelId}/members/${userId}`, { token });

const memberIds = async (s: TestServer, token: string, channelId: string) =>
  (await api(s, "GET", `/channels/${channelId}/members`, { token })).body.data.map(
    (m: { id: string }) => m.id,
  );

async function timeline(s: TestServer, channelId: string) {
  return await Array.fromAsync(s.ctx.kv.list<Message>({ prefix: keys.timeline(channelId) }));
}

async function events(s: TestServer) {
  return await Array.fromAsync(s.ctx.kv.list<OutboxEvent>({ prefix: keys.events() }));
}

Deno.test("members: list is sorted by name and needs ordinary visibility", async () => {
  await withWorkspace(async (s, w) => {
    const zed = await actor(s.ctx, w.team, "zed", "member");
    const bea = await actor(s.ctx, w.team, "Bea", "member");
    const pub = await createChannelAs(s, zed.token, "open");
    for (const u of [w.bot, bea, w.member]) {
      assertStatus(await add(s, zed.token, pub, u.user.id), 201);
    }
    const res = await api(s, "GET", `/channels/${pub}/members`, { token: w.admin.token });
    assertStatus(res, 200, "a human sees a public channel's members without joining");
    assert.deepEqual(res.body.data, [
      { id: bea.user.id, name: "Bea", type: "human" },
      { id: w.member.user.id, name: "Mo Member", type: "human" },
      { id: w.bot.user.id, name: "Robo Bot", type: "bot" },
      { id: zed.user.id, name: "zed", type: "human" },
    ]);

    const priv = await createChannelAs(s, w.member.token, "closed", "private");
    assertStatus(await api(s, "GET", `/channels/${priv}/members`, { token: w.admin.token }), 404);
    assertStatus(await api(s, "GET", `/channels/${priv}/members`, { token: w.bot.token }), 404);
    const general = await api(s, "GET", `/channels/${w.team.general_channel_id}/members`, {
      token: w.bot.token,
    });
    assertStatus(general, 404, "a bot outside general");
  });
});

Deno.test("members: who may add to a private channel", async () => {
  await withWorkspace(async (s, w) => {
    const extra = await actor(s.ctx, w.team, "Extra", "member");
    const bot2 = await actor(s.ctx, w.team, "Bot Two", "bot");
    const priv = await createChannelAs(s, w.member.token, "closed", "private");

    assertStatus(await add(s, w.bot.token, priv, extra.user.id), 404, "a bot outside it");
    assertStatus(await add(s, extra.token, priv, extra.user.id), 404, "a human outside it");
    const byAdmin = await add(s, w.admin.token, priv, w.bot.user.id);
    assertStatus(byAdmin, 201, "an admin outside it");
    assert.deepEqual(byAdmin.body.data, { id: w.bot.user.id, name: "Robo Bot", type: "bot" });
    assertStatus(await add(s, w.bot.token, priv, bot2.user.id), 201, "a bot inside it");
    assertStatus(await add(s, w.member.token, priv, extra.user.id), 201, "a human inside it");
    assert.deepEqual(
      (await memberIds(s, w.member.token, priv)).sort(),
      [w.member.user.id, w.bot.user.id, bot2.user.id, extra.user.id].sort(),
    );
    assert.ok(!(await memberIds(s, w.member.token, priv)).includes(w.admin.user.id));
    const listed = await api(s, "GET", "/channels", { token: bot2.token });
    assert.deepEqual(listed.body.data.map((c: { id: string }) => c.id), [priv]);
  });
});

Deno.test("members: anyone who sees a public channel may add to it", async () => {
  await withWorkspace(async (s, w) => {
    const pub = await createChannelAs(s, w.admin.token, "open");
    assertStatus(await add(s, w.bot.token, pub, w.bot.user.id), 404, "a bot sees only as a member");
    assertStatus(await add(s, w.member.token, pub, w.bot.user.id), 201, "a human, not a member");
    assertStatus(await add(s, w.bot.token, pub, w.member.user.id), 201, "a bot member");
  });
});

Deno.test("members: user_id must be a new member of the same team, else 422", async () => {
  await withWorkspace(async (s, w) => {
    const other = await workspace(s.ctx, "Other");
    const pub = await createChannelAs(s, w.admin.token, "open");
    const before = await countKeys(s.ctx.kv);
    const bad: [unknown, string][] = [
      [other.member.user.id, "another team's user"],
      [other.bot.user.id, "another team's bot"],
      ["00000000-0000-7000-8000-000000000000", "unknown"],
      [pub, "a channel id"],
      ["not-a-uuid", "malformed"],
      [42, "a number"],
      [null, "null"],
      [undefined, "missing"],
      [w.admin.user.id, "already a member"],
    ];
    for (const [userId, what] of bad) {
      assertInvalid(await add(s, w.admin.token, pub, userId), "user_id", what);
    }
    for (const raw of ["", "{", "[]", "null"]) {
      const res = await api(s, "POST", `/channels/${pub}/members`, { token: w.admin.token, raw });
      assertInvalid(res, "request", JSON.stringify(raw));
    }
    assert.equal(await countKeys(s.ctx.kv), before, "nothing half-written");
    const extra = await api(s, "POST", `/channels/${pub}/members`, {
      token: w.admin.token,
      body: { user_id: w.member.user.id, role: "owner" },
    });
    assertStatus(extra, 201, "unknown fields are ignored");
  });
});

Deno.test("members: direct and archived channels refuse additions with 403", async () => {
  await withWorkspace(async (s, w) => {
    const dm = await createDirectChannel(s.ctx, [w.member.user, w.bot.user]);
    const pub = await createChannelAs(s, w.admin.token, "old");
    await api(s, "POST", `/channels/${pub}/archive`, { token: w.admin.token });
    const before = await countKeys(s.ctx.kv);
    assertStatus(await add(s, w.member.token, dm.id, w.admin.user.id), 403, "direct");
    assertStatus(await add(s, w.admin.token, dm.id, w.admin.user.id), 404, "outside the dm");
    assertStatus(await remove(s, w.member.token, dm.id, w.bot.user.id), 403, "direct removal");
    assertStatus(await remove(s, w.bot.token, dm.id, w.bot.user.id), 403, "leaving a dm");
    const archived = await add(s, w.admin.token, pub, w.member.user.id);
    assertStatus(archived, 403, "archived");
    assert.match(archived.body.message, /archived/);
    assert.equal(await countKeys(s.ctx.kv), before);
  });
});

Deno.test("members: adding writes membership, notice and events in one commit", async () => {
  await withWorkspace(async (s, w) => {
    const pub = await createChannelAs(s, w.admin.token, "open");
    const eventsBefore = (await events(s)).length;
    assertStatus(await add(s, w.admin.token, pub, w.bot.user.id), 201);

    const notices = await timeline(s, pub);
    assert.equal(notices.length, 1);
    const notice = notices[0].value;
    assert.equal(notice.type, "member_joined");
    assert.deepEqual(notice.author, { id: w.bot.user.id, name: "Robo Bot", type: "bot" });
    assert.equal(notice.body, `<@${w.bot.user.id}> has joined the channel`, "it says who joined");
    assert.equal(notice.channel_id, pub);

    const fired = (await events(s)).slice(eventsBefore);
    assert.deepEqual(fired.map((e) => e.value.type).sort(), [
      "channel.member_added",
      "message.created",
    ]);
    const added = fired.find((e) => e.value.type === "channel.member_added")!;
    assert.deepEqual(added.value.data, {
      channel_id: pub,
      user: { id: w.bot.user.id, name: "Robo Bot", type: "bot" },
    });
    const created = fired.find((e) => e.value.type === "message.created")!;
    const message = created.value.data as { id: string; type: string; channel_id: string };
    assert.equal(message.id, notice.id);
    assert.equal(message.type, "member_joined");
    assert.equal(created.value.channel_id, pub);

    const membership = await s.ctx.kv.get(keys.member(pub, w.bot.user.id));
    const index = await s.ctx.kv.get(keys.userChannel(w.bot.user.id, pub));
    const stamps = new Set([
      membership.versionstamp,
      index.versionstamp,
      notices[0].versionstamp,
      added.versionstamp,
      created.versionstamp,
      (await s.ctx.kv.get(keys.message(notice.id))).versionstamp,
    ]);
    assert.equal(stamps.size, 1, "one commit wrote them all");
    assert.ok(membership.versionstamp);
  });
});

Deno.test("members: concurrent adds of one user: one 201, the other 422", async () => {
  await withWorkspace(async (s, w) => {
    const pub = await createChannelAs(s, w.admin.token, "race");
    const results = await Promise.all([
      add(s, w.admin.token, pub, w.bot.user.id),
      add(s, w.member.token, pub, w.bot.user.id),
      add(s, w.admin.token, pub, w.bot.user.id),
    ]);
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 422, 422]);
    assert.equal((await timeline(s, pub)).length, 1, "one notice");
  });
});

Deno.test("members: who may remove whom", async () => {
  await withWorkspace(async (s, w) => {
    const lead = await actor(s.ctx, w.team, "Lea Lead", "member");
    const extra = await actor(s.ctx, w.team, "Extra", "member");
    const bot2 = await actor(s.ctx, w.team, "Bot Two", "bot");
    const ch = await createChannelAs(s, lead.token, "team", "private");
    for (const u of [w.member, w.bot, bot2, extra]) {
      assertStatus(await add(s, lead.token, ch, u.user.id), 201);
    }
    assertStatus(await remove(s, w.member.token, ch, extra.user.id), 403, "a plain member");
    assertStatus(
      await remove(s, w.bot.token, ch, extra.user.id),
      403,
      "a bot that didn't create it",
    );
    assertStatus(await remove(s, w.member.token, ch, w.member.user.id), 204, "oneself");
    assertStatus(await remove(s, w.bot.token, ch, w.bot.user.id), 204, "a bot itself");
    assertStatus(await remove(s, lead.token, ch, extra.user.id), 204, "the human creator");
    assertStatus(await remove(s, w.admin.token, ch, bot2.user.id), 204, "an admin outside it");
    assert.deepEqual(await memberIds(s, lead.token, ch), [lead.user.id]);
    const listed = await api(s, "GET", "/channels", { token: extra.token });
    assert.ok(!listed.body.data.some((c: { id: string }) => c.id === ch), "index removed too");
    assertStatus(await api(s, "GET", `/channels/${ch}`, { token: extra.token }), 404);

    const botChannel = await createChannelAs(s, w.bot.token, "bot-made");
    assertStatus(await add(s, w.bot.token, botChannel, w.member.user.id), 201);
    assertStatus(
      await remove(s, w.bot.token, botChannel, w.member.user.id),
      204,
      "the bot creator",
    );
  });
});

Deno.test("members: a non-member is 404 whoever asks; general refuses removals", async () => {
  await withWorkspace(async (s, w) => {
    const ch = await createChannelAs(s, w.member.token, "team");
    const general = w.team.general_channel_id;
    const before = await countKeys(s.ctx.kv);
    for (const token of [w.member.token, w.admin.token]) {
      assertStatus(await remove(s, token, ch, w.bot.user.id), 404, "not a member");
      assertStatus(await remove(s, token, ch, "nope"), 404, "malformed");
      assertStatus(await remove(s, token, general, w.bot.user.id), 404, "bot in general");
    }
    assertStatus(await remove(s, w.member.token, general, w.member.user.id), 403, "leave general");
    assertStatus(
      await remove(s, w.admin.token, general, w.member.user.id),
      403,
      "admin on general",
    );
    assert.equal(await countKeys(s.ctx.kv), before);
  });
});

Deno.test("members: removing writes a member_left notice and message.created together", async () => {
  await withWorkspace(async (s, w) => {
    const ch = await createChannelAs(s, w.admin.token, "team");
    assertStatus(await add(s, w.admin.token, ch, w.member.user.id), 201);
    const eventsBefore = (await events(s)).length;
    assertStatus(await remove(s, w.member.token, ch, w.member.user.id), 204);
    const notices = await timeline(s, ch);
    assert.deepEqual(notices.map((n) => n.value.type), ["member_joined", "member_left"]);
    const left = notices[1];
    assert.deepEqual(left.value.author, { id: w.member.user.id, name: "Mo Member", type: "human" });
    const fired = (await events(s)).slice(eventsBefore);
    assert.deepEqual(fired.map((e) => e.value.type), ["message.created"]);
    assert.equal((fired[0].value.data as { id: string }).id, left.value.id);
    assert.equal(fired[0].versionstamp, left.versionstamp, "same commit");
    const membership = await s.ctx.kv.get(keys.member(ch, w.member.user.id));
    assert.equal(membership.versionstamp, null);
    assertStatus(await remove(s, w.member.token, ch, w.member.user.id), 404, "already gone");
  });
});

Deno.test("members: concurrent adds of different users all land, notices densely placed", async () => {
  await withWorkspace(async (s, w) => {
    const pub = await createChannelAs(s, w.admin.token, "crowd");
    const people = await Promise.all(
      Array.from({ length: 12 }, (_, i) => actor(s.ctx, w.team, `Person ${i}`, "bot")),
    );
    const results = await Promise.all(people.map((p) => add(s, w.admin.token, pub, p.user.id)));
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set([201]));
    const notices = await timeline(s, pub);
    assert.deepEqual(notices.map((n) => n.key[2]), people.map((_, i) => i + 1));
    assert.deepEqual(
      new Set(notices.map((n) => n.value.author.id)),
      new Set(people.map((p) => p.user.id)),
    );
    assert.equal((await memberIds(s, w.admin.token, pub)).length, 13);
  });
});
