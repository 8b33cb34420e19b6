import assert from "node:assert/strict";
import { createDirectChannel } from "../domain/channels/channels.ts";
import { keys } from "../kv/keys.ts";
import {
  actor,
  api,
  type ApiResponse,
  assertInvalid,
  assertStatus,
  countKeys,
  createChannelAs,
  withWorkspace,
  workspace,
} from "./harness.ts";

const names = (res: ApiResponse) => res.body.data.map((c: { name: string }) => c.name);

Deno.test("channels: create strips a leading #, slugs the name, adds the creator", async () => {
  await withWorkspace(async (s, w) => {
    const res = await api(s, "POST", "/channels", {
      token: w.member.token,
      body: { name: "  #Q3 Plans!  ", visibility: "private", topic: "roadmap" },
    });
    assertStatus(res, 201);
    const ch = res.body.data;
    assert.deepEqual(Object.keys(ch).sort(), [
      "created_at",
      "id",
      "is_archived",
      "is_direct",
      "is_general",
      "name",
      "slug",
      "topic",
      "visibility",
    ]);
    assert.equal(ch.name, "Q3 Plans!");
    assert.equal(ch.slug, "q3-plans");
    assert.equal(ch.visibility, "private");
    assert.equal(ch.topic, "roadmap");
    assert.deepEqual([ch.is_general, ch.is_archived, ch.is_direct], [false, false, false]);
    assert.ok(!Number.isNaN(Date.parse(ch.created_at)));
    const shown = await api(s, "GET", `/channels/${ch.id}`, { token: w.member.token });
    assert.deepEqual(shown.body.data, ch);
    const members = await api(s, "GET", `/channels/${ch.id}/members`, { token: w.member.token });
    assert.deepEqual(members.body.data, [{
      id: w.member.user.id,
      name: "Mo Member",
      type: "human",
    }]);
    const timeline = await Array.fromAsync(s.ctx.kv.list({ prefix: keys.timeline(ch.id) }));
    assert.equal(timeline.length, 0, "no system message for the creator");

    const bare = await api(s, "POST", "/channels", {
      token: w.bot.token,
      body: { name: "--Deploys & Alerts--", visibility: "public" },
    });
    assertStatus(bare, 201);
    assert.equal(bare.body.data.slug, "deploys-alerts");
    assert.equal(bare.body.data.topic, null);
  });
});

Deno.test("channels: a name whose slug exists in the team is 422 on name", async () => {
  await withWorkspace(async (s, w) => {
    await createChannelAs(s, w.admin.token, "Q3 Plans!");
    const before = await countKeys(s.ctx.kv);
    for (const name of ["q3 plans", "#Q3-PLANS", "q3_plans", "General", "#general"]) {
      const res = await api(s, "POST", "/channels", {
        token: w.member.token,
        body: { name, visibility: "public" },
      });
      assertInvalid(res, "name");
    }
    assert.equal(await countKeys(s.ctx.kv), before);
    const other = await workspace(s.ctx, "Other");
    await createChannelAs(s, other.admin.token, "Q3 plans");
  });
});

Deno.test("channels: create validates name, visibility and topic", async () => {
  await withWorkspace(async (s, w) => {
    const before = await countKeys(s.ctx.kv);
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "!!!", visibility: "public" }, "name"],
      [{ name: "#", visibility: "public" }, "name"],
      [{ name: "   ", visibility: "public" }, "name"],
      [{ name: "", visibility: "public" }, "name"],
      [{ name: null, visibility: "public" }, "name"],
      [{ name: "a".repeat(256), visibility: "public" }, "name"],
      [{ name: "ok" }, "visibility"],
      [{ name: "ok", visibility: "secret" }, "visibility"],
      [{ name: "ok", visibility: null }, "visibility"],
      [{ name: "ok", visibility: "public", topic: "t".repeat(256) }, "topic"],
      [{ name: "ok", visibility: "public", topic: ["t"] }, "topic"],
    ];
    for (const [body, field] of cases) {
      assertInvalid(await api(s, "POST", "/channels", { token: w.admin.token, body }), field);
    }
    assert.equal(await countKeys(s.ctx.kv), before);
    const longest = await api(s, "POST", "/channels", {
      token: w.admin.token,
      body: { name: "a".repeat(255), visibility: "public", topic: "t".repeat(255) },
    });
    assertStatus(longest, 201);
    const emoji = await api(s, "POST", "/channels", {
      token: w.admin.token,
      body: { name: "x" + "😀".repeat(254), visibility: "public", topic: "🎉".repeat(255) },
    });
    assertStatus(emoji, 201, "lengths count characters, not UTF-16 units");
    for (
      const [name, topic, field] of [["y" + "😀".repeat(255), null, "name"], [
        "z",
        "🎉".repeat(256),
        "topic",
      ]]
    ) {
      const res = await api(s, "POST", "/channels", {
        token: w.admin.token,
        body: { name, visibility: "public", topic },
      });
      assertInvalid(res, field!);
    }
    const nullTopic = await api(s, "POST", "/channels", {
      token: w.admin.token,
      body: { name: "quiet", visibility: "public", topic: null },
    });
    assertStatus(nullTopic, 201);
    assert.equal(nullTopic.body.data.topic, null);
  });
});

Deno.test("channels: list shows the subject's channels, archived ones too, by name", async () => {
  await withWorkspace(async (s, w) => {
    const zeta = await createChannelAs(s, w.member.token, "zeta");
    await createChannelAs(s, w.member.token, "Alpha", "private");
    await createChannelAs(s, w.admin.token, "beta");
    await createChannelAs(s, w.admin.token, "admins", "private");
    assertStatus(await api(s, "POST", `/channels/${zeta}/archive`, { token: w.member.token }), 200);
    const other = await workspace(s.ctx, "Other");
    await createChannelAs(s, other.admin.token, "aaa");
    const mine = await api(s, "GET", "/channels", { token: w.member.token });
    assertStatus(mine, 200);
    assert.deepEqual(names(mine), ["Alpha", "general", "zeta"]);
    assert.equal(mine.body.data[2].is_archived, true);
    assert.deepEqual(names(await api(s, "GET", "/channels", { token: w.bot.token })), []);
    await createChannelAs(s, w.bot.token, "bots");
    assert.deepEqual(names(await api(s, "GET", "/channels", { token: w.bot.token })), ["bots"]);
  });
});

Deno.test("channels: limit pages the list by name, and a cursor keeps its place", async () => {
  await withWorkspace(async (s, w) => {
    for (const name of ["delta", "Alpha", "charlie", "echo", "Bravo"]) {
      await createChannelAs(s, w.member.token, name);
    }
    const page = (query: string, token = w.member.token) =>
      api(s, "GET", `/channels?${query}`, { token });
    const all = await page("");
    assert.deepEqual(names(all), ["Alpha", "Bravo", "charlie", "delta", "echo", "general"]);
    assert.equal(all.body.meta.next_cursor, null);

    const first = await page("limit=2");
    assertStatus(first, 200);
    assert.deepEqual(names(first), ["Alpha", "Bravo"]);
    const cursor = first.body.meta.next_cursor;
    assert.equal(typeof cursor, "string");
    // Joined and left meanwhile: the next page starts after Bravo all the same.
    const bravo = first.body.data[1].id;
    await createChannelAs(s, w.member.token, "aardvark");
    assertStatus(
      await api(s, "DELETE", `/channels/${bravo}/members/${w.member.user.id}`, {
        token: w.member.token,
      }),
      204,
    );
    const second = await page(`limit=2&cursor=${encodeURIComponent(cursor)}`);
    assert.deepEqual(names(second), ["charlie", "delta"]);
    const rest = await page(`cursor=${encodeURIComponent(second.body.meta.next_cursor)}`);
    assert.deepEqual(names(rest), ["echo", "general"]);
    assert.equal(rest.body.meta.next_cursor, null);
    const exact = await page(`limit=2&cursor=${encodeURIComponent(second.body.meta.next_cursor)}`);
    assert.deepEqual(names(exact), ["echo", "general"]);
    assert.equal(exact.body.meta.next_cursor, null, "no empty page after a full last one");

    for (const limit of ["0", "1001", "1.5", "ten", ""]) {
      assertInvalid(await page(`limit=${limit}`), "limit", `limit=${limit}`);
    }
    // Another user's cursor, or one made up, does not say where a channel would sort.
    assertInvalid(await page(`cursor=${encodeURIComponent(cursor)}`, w.admin.token), "cursor");
    assertInvalid(await page(`limit=1&cursor=${bravo}.AAAA`), "cursor");
    assertInvalid(await page("cursor=nonsense"), "cursor");
  });
});

Deno.test("channels: show hides what the subject may not see as 404", async () => {
  await withWorkspace(async (s, w) => {
    const pub = await createChannelAs(s, w.member.token, "open");
    const priv = await createChannelAs(s, w.member.token, "closed", "private");
    const other = await workspace(s.ctx, "Other");
    const foreign = await createChannelAs(s, other.admin.token, "foreign");
    const dm = await createDirectChannel(s.ctx, [w.member.user, w.bot.user]);
    const see = async (token: string, id: string) =>
      (await api(s, "GET", `/channels/${id}`, { token })).status;

    assert.equal(await see(w.admin.token, pub), 200, "a human sees a public channel unjoined");
    assert.equal(await see(w.admin.token, priv), 404, "an admin does not read a private channel");
    assert.equal(await see(w.admin.token, foreign), 404, "another team's channel");
    assert.equal(await see(w.admin.token, dm.id), 404, "someone else's direct message");
    assert.equal(await see(w.member.token, dm.id), 200, "own direct message");
    assert.equal(await see(w.bot.token, dm.id), 200, "a bot in a direct message");
    assert.equal(await see(w.bot.token, pub), 404, "a bot sees only channels it is in");
    assert.equal(await see(w.bot.token, w.team.general_channel_id), 404);
    assert.equal(await see(other.admin.token, pub), 404);
    for (const id of ["nope", "00000000-0000-7000-8000-000000000000", pub.toUpperCase() + "0"]) {
      const res = await api(s, "GET", `/channels/${id}`, { token: w.member.token });
      assertStatus(res, 404, id);
      assert.equal(typeof res.body.message, "string");
    }
    const general = await api(s, "GET", `/channels/${w.team.general_channel_id}`, {
      token: w.member.token,
    });
    assert.equal(general.body.data.is_general, true);
    assert.equal(general.body.data.slug, "general");
  });
});

Deno.test("channels: archive and unarchive follow who may", async () => {
  await withWorkspace(async (s, w) => {
    const lead = await actor(s.ctx, w.team, "Lea Lead", "member");
    const archive = (token: string, id: string) =>
      api(s, "POST", `/channels/${id}/archive`, { token });
    const unarchive = (token: string, id: string) =>
      api(s, "POST", `/channels/${id}/unarchive`, { token });

    const botOwn = await createChannelAs(s, w.bot.token, "bot-own");
    const res = await archive(w.bot.token, botOwn);
    assertStatus(res, 200, "a bot archives a channel it created");
    assert.equal(res.body.data.is_archived, true);
    assert.equal(res.body.data.id, botOwn);
    assertStatus(await unarchive(w.bot.token, botOwn), 200);

    const humanOwn = await createChannelAs(s, lead.token, "lead-own");
    await api(s, "POST", `/channels/${humanOwn}/members`, {
      token: lead.token,
      body: { user_id: w.bot.user.id },
    });
    assertStatus(await archive(w.bot.token, humanOwn), 403, "a bot, a member but not creator");
    assertStatus(await archive(w.member.token, humanOwn), 403, "a human neither creator nor admin");
    assertStatus(await archive(lead.token, humanOwn), 200, "the human creator");
    assertStatus(await unarchive(w.member.token, humanOwn), 403);
    assertStatus(await unarchive(w.admin.token, humanOwn), 200, "an admin, not a member");

    const secret = await createChannelAs(s, lead.token, "lead-secret", "private");
    assertStatus(await archive(w.member.token, secret), 404, "hidden from a plain member");
    const archived = await archive(w.admin.token, secret);
    assertStatus(archived, 200, "an admin archives a private channel it is not in");
    assert.equal(archived.body.data.is_archived, true);
    const shown = await api(s, "GET", `/channels/${secret}`, { token: lead.token });
    assert.equal(shown.body.data.is_archived, true, "the change is stored");
    assertStatus(await unarchive(w.admin.token, secret), 200);
  });
});

Deno.test("channels: general and direct channels cannot be archived; repeats are 422", async () => {
  await withWorkspace(async (s, w) => {
    const general = w.team.general_channel_id;
    const dm = await createDirectChannel(s.ctx, [w.admin.user, w.member.user]);
    for (const path of [`/channels/${general}/archive`, `/channels/${dm.id}/archive`]) {
      const res = await api(s, "POST", path, { token: w.admin.token });
      assertStatus(res, 403, path);
      assert.equal(typeof res.body.message, "string");
    }
    assertStatus(
      await api(s, "POST", `/channels/${general}/unarchive`, { token: w.admin.token }),
      403,
    );

    const id = await createChannelAs(s, w.member.token, "twice");
    assertInvalid(
      await api(s, "POST", `/channels/${id}/unarchive`, { token: w.member.token }),
      "channel",
    );
    assertStatus(await api(s, "POST", `/channels/${id}/archive`, { token: w.member.token }), 200);
    const before = await countKeys(s.ctx.kv);
    assertInvalid(
      await api(s, "POST", `/channels/${id}/archive`, { token: w.member.token }),
      "channel",
    );
    assertInvalid(
      await api(s, "POST", `/channels/${id}/archive`, { token: w.admin.token }),
      "channel",
    );
    assert.equal(await countKeys(s.ctx.kv), before);
  });
});

Deno.test("channels: an archived channel refuses member changes with an 'archived' 403", async () => {
  await withWorkspace(async (s, w) => {
    const id = await createChannelAs(s, w.admin.token, "frozen");
    await api(s, "POST", `/channels/${id}/members`, {
      token: w.admin.token,
      body: { user_id: w.bot.user.id },
    });
    assertStatus(await api(s, "POST", `/channels/${id}/archive`, { token: w.admin.token }), 200);
    const before = await countKeys(s.ctx.kv);
    const attempts = [
      api(s, "POST", `/channels/${id}/members`, {
        token: w.admin.token,
        body: { user_id: w.member.user.id },
      }),
      api(s, "DELETE", `/channels/${id}/members/${w.bot.user.id}`, { token: w.admin.token }),
      api(s, "DELETE", `/channels/${id}/members/${w.bot.user.id}`, { token: w.bot.token }),
    ];
    for (const res of await Promise.all(attempts)) {
      assertStatus(res, 403);
      assert.match(res.body.message, /archived/);
    }
    assert.equal(await countKeys(s.ctx.kv), before);
    const members = await api(s, "GET", `/channels/${id}/members`, { token: w.bot.token });
    assertStatus(members, 200, "an archived channel can still be read");
    assert.equal(members.body.data.length, 2);
  });
});

Deno.test("channels: concurrent creates of one slug: one 201, the rest 422", async () => {
  await withWorkspace(async (s, w) => {
    const before = await countKeys(s.ctx.kv);
    const results = await Promise.all(
      ["Launch", "launch", "#LAUNCH", "launch!"].map((name) =>
        api(s, "POST", "/channels", { token: w.admin.token, body: { name, visibility: "public" } })
      ),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 422, 422, 422]);
    const listed = await api(s, "GET", "/channels", { token: w.admin.token });
    assert.equal(listed.body.data.filter((c: { slug: string }) => c.slug === "launch").length, 1);
    const written = await countKeys(s.ctx.kv) - before;
    assert.equal(
      written,
      5,
      "the winner's channel, slug, membership, its index and members version; no orphans",
    );
  });
});

Deno.test("channels: concurrent archives of one channel: one 200, the rest 422", async () => {
  await withWorkspace(async (s, w) => {
    const id = await createChannelAs(s, w.admin.token, "busy");
    const results = await Promise.all(
      [w.admin.token, w.admin.token, w.admin.token, w.admin.token].map((token) =>
        api(s, "POST", `/channels/${id}/archive`, { token })
      ),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 422, 422, 422]);
    for (const r of results.filter((r) => r.status === 422)) assertInvalid(r, "channel");
  });
});

Deno.test("channels: a trailing slash names the same resource", () =>
  withWorkspace(async (s, w) => {
    const get = (path: string) =>
      fetch(`${s.url}/api/v1${path}`, { headers: { Authorization: `Bearer ${w.admin.token}` } })
        .then(async (r) => ({ status: r.status, body: await r.json() }));
    const plain = await get("/channels");
    const slashed = await get("/channels/");
    assert.equal(slashed.status, 200, JSON.stringify(slashed.body));
    assert.deepEqual(slashed.body, plain.body);
    const general = w.team.general_channel_id;
    assert.deepEqual(await get(`/channels/${general}/`), await get(`/channels/${general}`));
    const made = await fetch(`${s.url}/api/v1/channels/`, {
      method: "POST",
      headers: { Authorization: `Bearer ${w.admin.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "slashed", visibility: "public" }),
    });
    assert.equal(made.status, 201, await made.text());
  }));

Deno.test("channels: PATCH renames (the slug follows, #name with it) and sets the topic, each by its own rule", async () => {
  await withWorkspace(async (s, w) => {
    const id = await createChannelAs(s, w.admin.token, "Launch");
    const patch = (token: string, body: unknown) =>
      api(s, "PATCH", `/channels/${id}`, { token, body });
    const renamed = await patch(w.admin.token, { name: "#Launch Day", topic: "Ship it" });
    assertStatus(renamed, 200);
    assert.equal(renamed.body.data.name, "Launch Day");
    assert.equal(renamed.body.data.slug, "launch-day");
    assert.equal(renamed.body.data.topic, "Ship it");
    const shown = await api(s, "GET", `/channels/${id}`, { token: w.admin.token });
    assert.deepEqual(shown.body.data, renamed.body.data);
    // The old slug is free again; a taken one is refused on `name`.
    assertStatus(
      await api(s, "POST", "/channels", {
        token: w.admin.token,
        body: { name: "launch", visibility: "public" },
      }),
      201,
    );
    assertInvalid(await patch(w.admin.token, { name: "General" }), "name");
    assertInvalid(await patch(w.admin.token, { name: "!!!" }), "name");
    assertInvalid(await patch(w.admin.token, { topic: "t".repeat(256) }), "topic");
    // Nothing asked: the channel as it is.
    assert.deepEqual((await patch(w.admin.token, {})).body.data, renamed.body.data);
    // null clears the topic.
    assert.equal((await patch(w.admin.token, { topic: null })).body.data.topic, null);

    // A member who didn't make it: not the name; the topic once in it.
    assertStatus(await patch(w.member.token, { topic: "mine" }), 403);
    await api(s, "POST", `/channels/${id}/members`, {
      token: w.admin.token,
      body: { user_id: w.member.user.id },
    });
    assertStatus(await patch(w.member.token, { topic: "mine" }), 200);
    assertStatus(await patch(w.member.token, { name: "mine" }), 403);
    // Nothing is changed when one part is refused.
    assertStatus(await patch(w.member.token, { name: "mine", topic: "theirs" }), 403);
    const after = await api(s, "GET", `/channels/${id}`, { token: w.admin.token });
    assert.deepEqual([after.body.data.name, after.body.data.topic], ["Launch Day", "mine"]);
  });
});
