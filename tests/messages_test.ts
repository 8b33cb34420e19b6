import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { envelopeOf } from "../domain/views.ts";
import { actor, api, type TestServer, workspace } from "./harness.ts";
import { assertInvalid, newChannel, outbox, post, posted, withServer } from "./message_fixtures.ts";

const messagesOf = (ch: string) => `/channels/${ch}/messages`;

async function timeline(s: TestServer, token: string, ch: string, query = "") {
  const res = await api(s, "GET", `${messagesOf(ch)}${query}`, { token });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

Deno.test("post: 201 with the trimmed Message and message.created in the outbox", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const res = await post(s, w.member, ch, { body: "  \n hello  world \t\n" });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.headers.get("Idempotent-Replayed"), null);
    const m = res.body.data;
    assert.equal(m.body, "hello  world");
    assert.equal(m.channel_id, ch);
    assert.equal(m.type, "standard");
    assert.deepEqual(m.author, { id: w.member.user.id, name: "Mo Member", type: "human" });
    assert.equal(m.reply_to_id, null);
    assert.equal(m.thread_root_id, null);
    assert.equal(m.sent_to_channel, false);
    assert.deepEqual(m.reactions, []);
    assert.equal(m.edited_at, null);
    assert.ok(!Number.isNaN(Date.parse(m.created_at)));
    const events = await outbox(s);
    assert.equal(events.length, 1);
    assert.equal(events[0].type, "message.created");
    assert.equal(events[0].channel_id, ch);
    assert.deepEqual(envelopeOf(events[0]).data, m);
  });
});

Deno.test("post: body rules answer 422 on body and write nothing", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const bad: unknown[] = [
      undefined,
      42,
      null,
      "",
      "   \n\t ",
      "x".repeat(10_001),
      "😀".repeat(10_001),
      "bell\u0007",
      "nul\u0000",
      "esc\u001b[31m",
      "del\u007f",
      "c1\u0085",
    ];
    for (const body of bad) assertInvalid(await post(s, w.member, ch, { body }), "body");
    const lone = await api(s, "POST", messagesOf(ch), {
      token: w.member.token,
      raw: '{"body":"broken \\ud800 surrogate"}',
      headers: { "Content-Type": "application/json" },
    });
    assertInvalid(lone, "body");
    assertInvalid(
      await api(s, "POST", messagesOf(ch), { token: w.member.token, raw: "nope" }),
      "request",
    );
    assertInvalid(
      await post(s, w.member, ch, { body: "x", sent_to_channel: "yes" }),
      "sent_to_channel",
    );
    const huge = await api(s, "POST", messagesOf(ch), {
      token: w.member.token,
      body: { body: "x".repeat(1024 * 1024) },
    });
    assert.equal(huge.status, 413);
    assert.ok(huge.body.message);
    assert.deepEqual(await timeline(s, w.member.token, ch), []);
    assert.equal((await outbox(s)).length, 0);

    const longest = await post(s, w.member, ch, { body: "😀".repeat(10_000) });
    assert.equal(longest.status, 201);
    const kept = await posted(s, w.member, ch, { body: "a\tb\r\nc\rd" });
    assert.equal(kept.body, "a\tb\nc\nd");
  });
});

Deno.test("post: client_uuid replays the original with 200 and no event", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const other = await newChannel(s, w.member, "other");
    const key = crypto.randomUUID();
    const first = await post(s, w.member, ch, { body: "once", client_uuid: key });
    assert.equal(first.status, 201);
    const again = await post(s, w.member, ch, { body: "twice?", client_uuid: key.toUpperCase() });
    assert.equal(again.status, 200);
    assert.equal(again.headers.get("Idempotent-Replayed"), "true");
    assert.deepEqual(again.body.data, first.body.data);
    assert.equal((await outbox(s)).length, 1);

    assertInvalid(
      await post(s, w.member, other, { body: "elsewhere", client_uuid: key }),
      "client_uuid",
    );
    assertInvalid(
      await post(s, w.member, ch, { body: "x", client_uuid: "not-a-uuid" }),
      "client_uuid",
    );
    const byAdmin = await post(s, w.admin, ch, {
      body: "same key, other author",
      client_uuid: key,
    });
    assert.equal(byAdmin.status, 201);

    await api(s, "DELETE", `${messagesOf(ch)}/${first.body.data.id}`, { token: w.member.token });
    const afterDelete = await post(s, w.member, ch, { body: "once", client_uuid: key });
    assert.equal(afterDelete.status, 200);
    assert.equal(afterDelete.body.data.body, "");
    assert.equal((await timeline(s, w.member.token, ch)).length, 2);
  });
});

Deno.test("post: 20 concurrent posts with one client_uuid create exactly one message", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const key = crypto.randomUUID();
    const results = await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) => post(s, w.member, ch, { body: `try ${i}`, client_uuid: key }),
      ),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [...Array(19).fill(200), 201]);
    assert.equal(new Set(results.map((r) => r.body.data.id)).size, 1);
    assert.equal(results.filter((r) => r.headers.get("Idempotent-Replayed") === "true").length, 19);
    assert.equal((await timeline(s, w.member.token, ch)).length, 1);
    assert.equal((await outbox(s)).filter((e) => e.type === "message.created").length, 1);
  });
});

Deno.test("post: inline replies and one-level threads", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const other = await newChannel(s, w.member, "elsewhere");
    const root = await posted(s, w.member, ch, { body: "root" });
    const foreign = await posted(s, w.member, other, { body: "foreign" });

    const reply = await posted(s, w.admin, ch, { body: "inline", reply_to_id: root.id });
    assert.equal(reply.reply_to_id, root.id);
    assert.equal(reply.thread_root_id, null);

    const hidden = await posted(s, w.admin, ch, { body: "in thread", thread_root_id: root.id });
    assert.equal(hidden.thread_root_id, root.id);
    assert.equal(hidden.sent_to_channel, false);
    const echoed = await posted(s, w.admin, ch, {
      body: "echoed",
      thread_root_id: root.id,
      reply_to_id: hidden.id,
      sent_to_channel: true,
    });
    assert.equal(echoed.sent_to_channel, true);
    assert.equal(echoed.reply_to_id, hidden.id);
    const plain = await posted(s, w.admin, ch, { body: "not a thread", sent_to_channel: true });
    assert.equal(plain.sent_to_channel, false);

    const ids = (await timeline(s, w.member.token, ch)).map((m: { id: string }) => m.id);
    assert.deepEqual(ids, [plain.id, echoed.id, reply.id, root.id]);

    for (const field of ["reply_to_id", "thread_root_id"]) {
      assertInvalid(await post(s, w.admin, ch, { body: "x", [field]: foreign.id }), field);
      assertInvalid(await post(s, w.admin, ch, { body: "x", [field]: crypto.randomUUID() }), field);
      assertInvalid(await post(s, w.admin, ch, { body: "x", [field]: "42" }), field);
    }
    assertInvalid(
      await post(s, w.admin, ch, { body: "x", thread_root_id: hidden.id }),
      "thread_root_id",
    );
    const nested = await posted(s, w.admin, ch, {
      body: "reply to a reply",
      reply_to_id: hidden.id,
    });
    assert.equal(nested.reply_to_id, hidden.id);

    const gone = await posted(s, w.admin, ch, { body: "to delete" });
    await api(s, "DELETE", `${messagesOf(ch)}/${gone.id}`, { token: w.admin.token });
    assertInvalid(await post(s, w.admin, ch, { body: "x", reply_to_id: gone.id }), "reply_to_id");
    assertInvalid(
      await post(s, w.admin, ch, { body: "x", thread_root_id: gone.id }),
      "thread_root_id",
    );

    const room = await newChannel(s, w.admin, "room");
    await api(s, "POST", `/channels/${room}/members`, {
      token: w.admin.token,
      body: { user_id: w.member.user.id },
    });
    const [joined] = await timeline(s, w.admin.token, room);
    assert.equal(joined.type, "member_joined");
    assertInvalid(
      await post(s, w.admin, room, { body: "x", reply_to_id: joined.id }),
      "reply_to_id",
    );
    assertInvalid(
      await post(s, w.admin, room, { body: "x", thread_root_id: joined.id }),
      "thread_root_id",
    );
  });
});

Deno.test("visibility: who may read and post where", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const pub = await newChannel(s, w.member, "open");
    const priv = await newChannel(s, w.member, "secret", "private");
    const outsiders = await workspace(s.ctx, "Other Co");

    assert.equal((await post(s, w.admin, pub, { body: "not a member, public" })).status, 201);
    assert.equal((await api(s, "GET", messagesOf(pub), { token: w.admin.token })).status, 200);
    assert.equal((await post(s, w.bot, pub, { body: "bot outside" })).status, 404);
    assert.equal((await api(s, "GET", messagesOf(pub), { token: w.bot.token })).status, 404);
    for (const stranger of [w.admin, w.bot, outsiders.admin]) {
      assert.equal((await post(s, stranger, priv, { body: "x" })).status, 404);
      assert.equal((await api(s, "GET", messagesOf(priv), { token: stranger.token })).status, 404);
    }
    assert.equal((await post(s, w.member, "not-a-uuid", { body: "x" })).status, 404);
    assert.equal((await post(s, w.member, crypto.randomUUID(), { body: "x" })).status, 404);
    const hiddenGarbage = await api(s, "POST", messagesOf(priv), {
      token: w.admin.token,
      raw: "[",
    });
    assert.equal(hiddenGarbage.status, 404, "the 404 comes before the body's 422");

    const readOnly = await actor(s.ctx, w.team, "Reader", "member", ["messages:read"]);
    const denied = await post(s, readOnly, pub, { body: "x" });
    assert.equal(denied.status, 403);
    assert.match(denied.body.message, /messages:write/);

    await api(s, "POST", `/channels/${priv}/members`, {
      token: w.member.token,
      body: { user_id: w.bot.user.id },
    });
    assert.equal((await post(s, w.bot, priv, { body: "now a member" })).status, 201);
  });
});

Deno.test("show: a message of this channel only", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const other = await newChannel(s, w.member, "other");
    const m = await posted(s, w.member, ch, { body: "hi" });
    const reply = await posted(s, w.member, ch, { body: "deep", thread_root_id: m.id });
    const show = await api(s, "GET", `${messagesOf(ch)}/${m.id}`, { token: w.admin.token });
    assert.equal(show.status, 200);
    assert.deepEqual(show.body.data, m);
    const threaded = await api(s, "GET", `${messagesOf(ch)}/${reply.id}`, { token: w.admin.token });
    assert.equal(threaded.body.data.thread_root_id, m.id);
    for (
      const path of [
        `${messagesOf(other)}/${m.id}`,
        `${messagesOf(ch)}/nope`,
        `${messagesOf(ch)}/${crypto.randomUUID()}`,
      ]
    ) {
      assert.equal((await api(s, "GET", path, { token: w.member.token })).status, 404, path);
    }
    assert.equal(
      (await api(s, "GET", `${messagesOf(ch)}/${m.id}`, { token: w.bot.token })).status,
      404,
    );
  });
});

Deno.test("edit: author only, sets edited_at, fires message.updated once", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const m = await posted(s, w.member, ch, { body: "first" });
    const path = `${messagesOf(ch)}/${m.id}`;

    const notMine = await api(s, "PATCH", path, { token: w.admin.token, body: { body: "" } });
    assert.equal(notMine.status, 403, "permission comes before validation");
    assertInvalid(
      await api(s, "PATCH", path, { token: w.member.token, body: { body: " " } }),
      "body",
    );
    assertInvalid(await api(s, "PATCH", path, { token: w.member.token, body: {} }), "body");
    assertInvalid(await api(s, "PATCH", path, { token: w.member.token, raw: "42" }), "request");
    assert.equal((await outbox(s)).length, 1);

    const edited = await api(s, "PATCH", path, {
      token: w.member.token,
      body: { body: " second " },
    });
    assert.equal(edited.status, 200);
    assert.equal(edited.body.data.body, "second");
    assert.ok(edited.body.data.edited_at);
    assert.equal(edited.body.data.created_at, m.created_at);
    const same = await api(s, "PATCH", path, { token: w.member.token, body: { body: "second" } });
    assert.equal(same.body.data.body, "second");
    assert.ok(same.body.data.edited_at >= edited.body.data.edited_at, "every edit sets edited_at");
    const events = await outbox(s);
    assert.deepEqual(events.map((e) => e.type), [
      "message.created",
      "message.updated",
      "message.updated",
    ]);
    assert.deepEqual(envelopeOf(events[2]).data, same.body.data);
    const [listed] = await timeline(s, w.member.token, ch);
    assert.deepEqual(listed, same.body.data);

    assert.equal(
      (await api(s, "PATCH", `${messagesOf(ch)}/nope`, {
        token: w.member.token,
        body: { body: "x" },
      })).status,
      404,
    );

    await api(s, "DELETE", path, { token: w.member.token });
    assertInvalid(
      await api(s, "PATCH", path, { token: w.member.token, body: { body: "back" } }),
      "message",
    );

    const room = await newChannel(s, w.admin, "room");
    await api(s, "POST", `/channels/${room}/members`, {
      token: w.admin.token,
      body: { user_id: w.member.user.id },
    });
    const [joined] = await timeline(s, w.admin.token, room);
    const sysPath = `${messagesOf(room)}/${joined.id}`;
    assertInvalid(
      await api(s, "PATCH", sysPath, { token: w.member.token, body: { body: "x" } }),
      "message",
    );
    assert.equal(
      (await api(s, "PATCH", sysPath, { token: w.admin.token, body: { body: "x" } })).status,
      403,
    );
  });
});

Deno.test("delete: a tombstone keeps its place; repeats and system messages", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const m = await posted(s, w.member, ch, { body: "doomed" });
    const after = await posted(s, w.member, ch, { body: "after" });
    const path = `${messagesOf(ch)}/${m.id}`;
    await api(s, "PATCH", path, { token: w.member.token, body: { body: "edited" } });
    await api(s, "PUT", `${path}/reactions/${encodeURIComponent("👍")}`, { token: w.admin.token });
    const before = (await api(s, "GET", path, { token: w.member.token })).body.data;
    assert.deepEqual(before.reactions, [{ emoji: "👍", count: 1 }]);

    assert.equal((await api(s, "DELETE", path, { token: w.admin.token })).status, 403);
    const del = await api(s, "DELETE", path, { token: w.member.token });
    assert.equal(del.status, 204);
    assert.equal(del.body, null);
    const tomb = (await api(s, "GET", path, { token: w.member.token })).body.data;
    assert.deepEqual(tomb, { ...before, body: "", text: "", reactions: [] });
    const list = await timeline(s, w.member.token, ch);
    assert.deepEqual(list.map((x: { id: string }) => x.id), [after.id, m.id]);
    assert.deepEqual(list[1], tomb);
    const reactionKeys = await Array.fromAsync(s.ctx.kv.list({ prefix: keys.reactions(m.id) }));
    assert.equal(reactionKeys.length, 0);

    const eventsBefore = await outbox(s);
    assert.equal(eventsBefore.at(-1)?.type, "message.deleted");
    assert.deepEqual(envelopeOf(eventsBefore.at(-1)!).data, tomb);
    assert.equal((await api(s, "DELETE", path, { token: w.member.token })).status, 204);
    assert.equal((await outbox(s)).length, eventsBefore.length);
    assert.equal((await api(s, "DELETE", path, { token: w.admin.token })).status, 403);
    assert.equal(
      (await api(s, "DELETE", `${messagesOf(ch)}/${crypto.randomUUID()}`, {
        token: w.member.token,
      })).status,
      404,
    );

    const room = await newChannel(s, w.admin, "room");
    await api(s, "POST", `/channels/${room}/members`, {
      token: w.admin.token,
      body: { user_id: w.member.user.id },
    });
    const [joined] = await timeline(s, w.admin.token, room);
    const sys = await api(s, "DELETE", `${messagesOf(room)}/${joined.id}`, {
      token: w.member.token,
    });
    assert.equal(sys.status, 403);
  });
});

Deno.test("archived channels are read-only", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = await newChannel(s, w.member, "old");
    const m = await posted(s, w.member, ch, { body: "last words" });
    const archive = await api(s, "POST", `/channels/${ch}/archive`, { token: w.member.token });
    assert.equal(archive.status, 200);
    const eventsBefore = (await outbox(s)).length;
    const path = `${messagesOf(ch)}/${m.id}`;
    const attempts = [
      await post(s, w.member, ch, { body: "more" }),
      await post(s, w.member, ch, { body: "" }),
      await api(s, "PATCH", path, { token: w.member.token, body: { body: "changed" } }),
      await api(s, "DELETE", path, { token: w.member.token }),
      await api(s, "PUT", `${path}/reactions/%F0%9F%91%8D`, { token: w.member.token }),
      await api(s, "DELETE", `${path}/reactions/%F0%9F%91%8D`, { token: w.member.token }),
    ];
    for (const res of attempts) {
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.match(res.body.message, /archived/);
    }
    assert.equal((await outbox(s)).length, eventsBefore);
    assert.deepEqual((await timeline(s, w.member.token, ch)).map((x: { id: string }) => x.id), [
      m.id,
    ]);
    assert.equal((await api(s, "GET", path, { token: w.member.token })).status, 200);
  });
});
