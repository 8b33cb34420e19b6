import assert from "node:assert/strict";
import { createCustomEmoji, createTeam } from "../domain/people/workspace.ts";
import { keys } from "../kv/keys.ts";
import { actor, api, type TestServer, workspace } from "./harness.ts";
import { assertInvalid, newChannel, outbox, posted, withServer } from "./message_fixtures.ts";

const reactionPath = (ch: string, id: string, emoji: string) =>
  `/channels/${ch}/messages/${id}/reactions/${emoji}`;

const enc = encodeURIComponent;

async function summary(s: TestServer, token: string, ch: string, id: string) {
  const res = await api(s, "GET", `/channels/${ch}/messages/${id}`, { token });
  assert.equal(res.status, 200);
  return res.body.data.reactions;
}

Deno.test("reactions: PUT and DELETE are 204, idempotent, and only adding fires an event", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const m = await posted(s, w.member, ch, { body: "react to me" });
    const path = reactionPath(ch, m.id, enc("👍"));

    const put = await api(s, "PUT", path, { token: w.admin.token });
    assert.equal(put.status, 204);
    assert.equal(put.body, null);
    assert.equal((await api(s, "PUT", path, { token: w.admin.token })).status, 204);
    assert.deepEqual(await summary(s, w.member.token, ch, m.id), [{ emoji: "👍", count: 1 }]);
    let events = (await outbox(s)).filter((e) => e.type === "reaction.added");
    assert.equal(events.length, 1);
    assert.equal(events[0].channel_id, ch);
    assert.deepEqual(events[0].data, {
      channel_id: ch,
      message_id: m.id,
      emoji: "👍",
      user: { id: w.admin.user.id, name: "Ada Admin", type: "human" },
    });

    await api(s, "PUT", path, { token: w.member.token });
    assert.deepEqual(await summary(s, w.member.token, ch, m.id), [{ emoji: "👍", count: 2 }]);

    const total = (await outbox(s)).length;
    const del = await api(s, "DELETE", path, { token: w.admin.token });
    assert.equal(del.status, 204);
    assert.equal(del.body, null);
    assert.equal((await api(s, "DELETE", path, { token: w.admin.token })).status, 204);
    assert.equal(
      (await api(s, "DELETE", reactionPath(ch, m.id, enc("🎉")), { token: w.admin.token })).status,
      204,
    );
    assert.deepEqual(await summary(s, w.member.token, ch, m.id), [{ emoji: "👍", count: 1 }]);
    await api(s, "DELETE", path, { token: w.member.token });
    assert.deepEqual(await summary(s, w.member.token, ch, m.id), []);
    assert.equal((await outbox(s)).length, total, "removing fires nothing");

    const [listed] =
      (await api(s, "GET", `/channels/${ch}/messages`, { token: w.member.token })).body.data;
    assert.deepEqual(listed.reactions, []);
    events = await outbox(s);
    assert.equal(events.filter((e) => e.type === "message.updated").length, 0);
  });
});

Deno.test("reactions: the summary keeps first-used order", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const m = await posted(s, w.member, ch, { body: "order" });
    const put = (who: string, e: string) =>
      api(s, "PUT", reactionPath(ch, m.id, enc(e)), { token: who });
    const del = (who: string, e: string) =>
      api(s, "DELETE", reactionPath(ch, m.id, enc(e)), { token: who });
    await put(w.member.token, "🎉");
    await put(w.admin.token, "👍");
    await put(w.admin.token, "🎉");
    await put(w.member.token, "🚀");
    assert.deepEqual(await summary(s, w.member.token, ch, m.id), [
      { emoji: "🎉", count: 2 },
      { emoji: "👍", count: 1 },
      { emoji: "🚀", count: 1 },
    ]);
    await del(w.admin.token, "👍");
    await put(w.member.token, "👍");
    assert.deepEqual(
      (await summary(s, w.member.token, ch, m.id)).map((r: { emoji: string }) => r.emoji),
      ["🎉", "🚀", "👍"],
    );
  });
});

Deno.test("reactions: which emoji are accepted", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const m = await posted(s, w.member, ch, { body: "emoji" });
    await createCustomEmoji(s.ctx, w.team.id, "party-parrot");
    const elsewhere = await createTeam(s.ctx, "Other");
    await createCustomEmoji(s.ctx, elsewhere.id, "theirs");
    const good = ["👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "1️⃣", "#️⃣", "❤️", "🏴󠁧󠁢󠁥󠁮󠁧󠁿", "👩🏻‍❤️‍💋‍👨🏼"];
    for (const e of good) {
      const res = await api(s, "PUT", reactionPath(ch, m.id, enc(e)), { token: w.member.token });
      assert.equal(res.status, 204, `${e}: ${JSON.stringify(res.body)}`);
    }
    const custom = await api(s, "PUT", reactionPath(ch, m.id, ":party-parrot:"), {
      token: w.member.token,
    });
    assert.equal(custom.status, 204);
    const encodedCustom = await api(s, "PUT", reactionPath(ch, m.id, "%3Aparty-parrot%3A"), {
      token: w.admin.token,
    });
    assert.equal(encodedCustom.status, 204);
    const emojis = (await summary(s, w.member.token, ch, m.id)).map((r: { emoji: string }) =>
      r.emoji
    );
    assert.deepEqual(emojis, [...good, ":party-parrot:"]);

    const bad = [
      "abc",
      enc("👍👍"),
      enc("👍 "),
      enc("©"),
      "%FF",
      "%F0%9F%91",
      "%ZZ",
      "%",
      enc("a".repeat(33)),
      enc(`:${"a".repeat(31)}:`),
      ":nope:",
      ":theirs:",
      ":Party-Parrot:",
      "%3A%3A",
    ];
    const before = (await outbox(s)).length;
    for (const e of bad) {
      assertInvalid(
        await api(s, "PUT", reactionPath(ch, m.id, e), { token: w.member.token }),
        "emoji",
      );
      assertInvalid(
        await api(s, "DELETE", reactionPath(ch, m.id, e), { token: w.member.token }),
        "emoji",
      );
    }
    assert.equal((await outbox(s)).length, before);
    assert.equal((await summary(s, w.member.token, ch, m.id)).length, good.length + 1);
    // A bare shortcode, as Slack's Web API takes it, is told how to write it here.
    const bare = await api(s, "PUT", reactionPath(ch, m.id, "rocket"), { token: w.member.token });
    assert.match(bare.body.message, /in colons here: :rocket: \(or 🚀 itself\)/);
    const bareCustom = await api(s, "PUT", reactionPath(ch, m.id, "party-parrot"), {
      token: w.member.token,
    });
    assert.match(bareCustom.body.message, /:party-parrot:, naming a custom emoji/);
  });
});

Deno.test("reactions: standard shortcodes are their Unicode emoji, and no custom emoji takes one's name", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const m = await posted(s, w.member, ch, { body: "shortcodes" });
    for (const code of [":thumbsup:", ":+1:", enc("👍"), ":tada:"]) {
      const res = await api(s, "PUT", reactionPath(ch, m.id, code), { token: w.member.token });
      assert.equal(res.status, 204, `${code}: ${JSON.stringify(res.body)}`);
    }
    const reactions = await summary(s, w.member.token, ch, m.id);
    assert.deepEqual(reactions.map((r: { emoji: string }) => r.emoji), ["👍", "🎉"]);
    const added = (await outbox(s)).filter((e) => e.type === "reaction.added");
    assert.deepEqual(added.map((e) => (e.data as { emoji: string }).emoji), ["👍", "🎉"]);
    const gone = await api(s, "DELETE", reactionPath(ch, m.id, ":+1:"), { token: w.member.token });
    assert.equal(gone.status, 204);
    assert.deepEqual(
      (await summary(s, w.member.token, ch, m.id)).map((r: { emoji: string }) => r.emoji),
      ["🎉"],
    );
    await assert.rejects(
      () => createCustomEmoji(s.ctx, w.team.id, "thumbsup"),
      (e: { status?: number; message?: string }) =>
        e.status === 422 && /is the standard emoji 👍; choose another name/.test(e.message ?? ""),
    );
  });
});

Deno.test("reactions: 404, 403 and 422 before anything is written", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const other = await newChannel(s, w.member, "other");
    const priv = await newChannel(s, w.member, "secret", "private");
    const m = await posted(s, w.member, ch, { body: "x" });
    const hidden = await posted(s, w.member, priv, { body: "y" });
    const thumbs = enc("👍");

    const notFound = [
      reactionPath(other, m.id, thumbs),
      reactionPath(ch, "not-a-uuid", thumbs),
      reactionPath(ch, crypto.randomUUID(), thumbs),
      reactionPath("nope", m.id, thumbs),
      reactionPath(priv, hidden.id, thumbs),
      reactionPath(priv, hidden.id, "garbage"),
    ];
    for (const path of notFound) {
      assert.equal((await api(s, "PUT", path, { token: w.admin.token })).status, 404, path);
    }
    assert.equal(
      (await api(s, "PUT", reactionPath(ch, m.id, thumbs), { token: w.bot.token })).status,
      404,
    );

    const noScope = await actor(s.ctx, w.team, "Poster", "member", ["messages:write"]);
    const denied = await api(s, "PUT", reactionPath(ch, m.id, thumbs), { token: noScope.token });
    assert.equal(denied.status, 403);

    const room = await newChannel(s, w.admin, "room");
    await api(s, "POST", `/channels/${room}/members`, {
      token: w.admin.token,
      body: { user_id: w.member.user.id },
    });
    const [joined] =
      (await api(s, "GET", `/channels/${room}/messages`, { token: w.admin.token })).body.data;
    assertInvalid(
      await api(s, "PUT", reactionPath(room, joined.id, thumbs), { token: w.admin.token }),
      "message",
    );

    await api(s, "DELETE", `/channels/${ch}/messages/${m.id}`, { token: w.member.token });
    assertInvalid(
      await api(s, "PUT", reactionPath(ch, m.id, thumbs), { token: w.admin.token }),
      "message",
    );
    assertInvalid(
      await api(s, "DELETE", reactionPath(ch, m.id, thumbs), { token: w.admin.token }),
      "message",
    );
    assert.equal((await outbox(s)).filter((e) => e.type === "reaction.added").length, 0);
  });
});

Deno.test("reactions: at most 50 different emoji per message", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const m = await posted(s, w.member, ch, { body: "busy" });
    const faces = Array.from({ length: 51 }, (_, i) => String.fromCodePoint(0x1f600 + i));
    for (const face of faces.slice(0, 50)) {
      const res = await api(s, "PUT", reactionPath(ch, m.id, enc(face)), { token: w.member.token });
      assert.equal(res.status, 204);
    }
    const over = await api(s, "PUT", reactionPath(ch, m.id, enc(faces[50])), {
      token: w.member.token,
    });
    assertInvalid(over, "emoji");
    const more = await api(s, "PUT", reactionPath(ch, m.id, enc(faces[0])), {
      token: w.admin.token,
    });
    assert.equal(more.status, 204, "an emoji already there can still be added to");
    const list = await summary(s, w.member.token, ch, m.id);
    assert.equal(list.length, 50);
    assert.deepEqual(list[0], { emoji: faces[0], count: 2 });
  });
});

Deno.test("reactions: concurrent reactions all count, repeats count once", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = w.team.general_channel_id;
    const m = await posted(s, w.member, ch, { body: "popular" });
    const people = await Promise.all(
      Array.from({ length: 12 }, (_, i) => actor(s.ctx, w.team, `Fan ${i}`, "member")),
    );
    const path = reactionPath(ch, m.id, enc("🔥"));
    const results = await Promise.all([
      ...people.map((p) => api(s, "PUT", path, { token: p.token })),
      ...Array.from({ length: 8 }, () => api(s, "PUT", path, { token: w.admin.token })),
    ]);
    assert.ok(results.every((r) => r.status === 204));
    assert.deepEqual(await summary(s, w.member.token, ch, m.id), [{ emoji: "🔥", count: 13 }]);
    assert.equal((await outbox(s)).filter((e) => e.type === "reaction.added").length, 13);
    const recorded = await Array.fromAsync(s.ctx.kv.list({ prefix: keys.reactions(m.id) }));
    assert.equal(recorded.length, 13);
  });
});
