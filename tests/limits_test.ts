/**
 * Bounded work per request, and the limits that keep one member from wearing the service down:
 * each test first does what an attacker did (issue 15's findings 3 to 5), then checks the bound.
 */
import assert from "node:assert/strict";
import { createIncoming } from "../domain/webhooks/incoming.ts";
import { MAX_LIVE_TOKENS } from "../domain/people/tokens.ts";
import { createToken, listTokens, revokeTokenById } from "../domain/people/tokens.ts";
import { createUser } from "../domain/people/workspace.ts";
import { addMemberAsOperator } from "../domain/channels/members.ts";
import {
  actor,
  api,
  assertInvalid,
  assertStatus,
  createChannelAs,
  signedInCookie,
  startServer,
  withWorkspace,
} from "./harness.ts";
import { checkResponse } from "./openapi_check.ts";
import type { Store } from "../kv/store/store.ts";
import { subjectOfPerson } from "../domain/principals.ts";

const HOOK = "http://127.0.0.1:9/hook";

/** Counts the keys the store is asked for while `fn` runs (a counting wrapper, not a mock). */
async function keysRead(kv: Store, fn: () => Promise<void>): Promise<number> {
  let n = 0;
  const { get, getMany } = kv;
  kv.get = ((key: Deno.KvKey, o?: { consistency?: Deno.KvConsistencyLevel }) => {
    n++;
    return get.call(kv, key, o);
  }) as typeof kv.get;
  kv.getMany = ((list: Deno.KvKey[], o?: { consistency?: Deno.KvConsistencyLevel }) => {
    n += list.length;
    return getMany.call(kv, list, o);
  }) as typeof kv.getMany;
  try {
    await fn();
  } finally {
    kv.get = get;
    kv.getMany = getMany;
  }
  return n;
}

Deno.test("limits: channel_ids are at most 100, refused before any of them is looked up", () =>
  withWorkspace(async (s, w) => {
    const room = await createChannelAs(s, w.member.token, "room");
    const many = (n: number) => [room, ...Array.from({ length: n - 1 }, () => crypto.randomUUID())];
    const body = (ids: string[]) => ({
      name: "wide",
      url: HOOK,
      events: ["message.created"],
      channel_ids: ids,
    });
    const read = await keysRead(s.ctx.kv, async () => {
      const huge = await api(s, "POST", "/webhooks", {
        token: w.member.token,
        body: body(many(25_000)),
      });
      assertInvalid(huge, "channel_ids", "25,000 channel ids");
      assert.match(huge.body.errors.channel_ids[0], /at most 100/);
    });
    assert.ok(read < 20, `25,000 channel ids cost ${read} key reads`);
    assertInvalid(
      await api(s, "POST", "/webhooks", { token: w.member.token, body: body(many(101)) }),
      "channel_ids",
    );
    const sub = await api(s, "POST", "/webhooks", { token: w.member.token, body: body([room]) });
    assertStatus(sub, 201);
    assertInvalid(
      await api(s, "PATCH", `/webhooks/${sub.body.data.id}`, {
        token: w.member.token,
        body: { channel_ids: many(101) },
      }),
      "channel_ids",
    );
    const events = Array(101).fill("message.created");
    assertInvalid(
      await api(s, "POST", "/webhooks", {
        token: w.member.token,
        body: { ...body([room]), events },
      }),
      "events",
    );
  }));

Deno.test("limits: a body too deep or with too many keys is refused before it is parsed", () =>
  withWorkspace(async (s, w) => {
    const path = `/channels/${w.team.general_channel_id}/messages`;
    const deep = `{"body":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    assertInvalid(await api(s, "POST", path, { token: w.member.token, raw: deep }), "request");
    const keys = JSON.stringify(
      Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 0])),
    );
    assertInvalid(await api(s, "POST", path, { token: w.member.token, raw: keys }), "request");
    const spaced = await api(s, "POST", path, {
      token: w.member.token,
      body: { body: `${" ".repeat(900_000)}fits once trimmed` },
    });
    assertStatus(spaced, 201, "a long body of mostly spaces is still one short message");
  }));

Deno.test("limits: Slack payloads nested deeper than 32 levels or with over 1,000 elements are 422 on text", () =>
  withWorkspace(async (s, w) => {
    const channel = await createChannelAs(s, w.admin.token, "alerts");
    await addMemberAsOperator(s.ctx, channel, w.bot.user);
    const { url } = await createIncoming(s.ctx, { channelId: channel, botId: w.bot.user.id }, null);
    const send = async (payload: string) => {
      const res = await fetch(url, {
        method: "POST",
        body: payload,
        headers: { "Content-Type": "application/json", Accept: "application/json" },
      });
      const body = await res.json();
      checkResponse("POST", new URL(url).pathname, res.status, body);
      return { status: res.status, headers: res.headers, body };
    };
    const nested = (depth: number) => {
      let text: unknown = "deep";
      for (let i = 1; i < depth; i++) text = { text };
      return JSON.stringify({ attachments: [{ text }] });
    };
    // The attack: text nested 40,000 deep overflowed the stack of the text walk (a 500).
    assertInvalid(await send(nested(40_000)), "text", "40,000 deep");
    // {attachments:[{text:…}]} puts `depth` text objects below two more levels.
    assertInvalid(await send(nested(32)), "text", "33 levels");
    assertStatus(await send(nested(30)), 201, "32 levels");
    const blocks = (n: number) =>
      JSON.stringify({
        blocks: Array.from(
          { length: n },
          () => ({ type: "section", text: { type: "mrkdwn", text: "x" } }),
        ),
      });
    assertStatus(await send(blocks(1_000)), 201, "1,000 blocks");
    assertInvalid(await send(blocks(1_001)), "text", "1,001 blocks");
    const mixed = JSON.stringify({
      text: "fields too",
      attachments: Array.from(
        { length: 10 },
        () => ({ fields: Array.from({ length: 100 }, () => ({ title: "a", value: "b" })) }),
      ),
    });
    assertInvalid(await send(mixed), "text", "10 attachments and 1,000 fields");
  }));

Deno.test("limits: a user holds at most 25 live tokens, also when they are made at once", () =>
  withWorkspace(async (s, w) => {
    const user = w.member.user;
    const make = () =>
      createToken(s.ctx, user, { scopes: ["channels:read"], actor: subjectOfPerson(user) });
    const made = await Promise.allSettled(Array.from({ length: 30 }, make));
    const refused = made.filter((r) => r.status === "rejected");
    assert.equal(made.length - refused.length, MAX_LIVE_TOKENS - 1, "the harness made one");
    for (const r of refused) {
      const e = (r as PromiseRejectedResult).reason;
      assert.equal(e.status, 422);
      assert.match(e.message, /25 live tokens/);
    }
    const live = (await listTokens(s.ctx, user.id)).filter((t) => !t.revoked_at);
    assert.equal(live.length, MAX_LIVE_TOKENS);
    await revokeTokenById(s.ctx, live[0].id, subjectOfPerson(user));
    await make();
    const expiring = await createUser(
      s.ctx,
      { teamId: w.team.id, name: "Temp Bot", type: "bot" },
      null,
    );
    for (let i = 0; i < MAX_LIVE_TOKENS; i++) {
      await createToken(s.ctx, expiring, {
        scopes: ["channels:read"],
        expiresInSeconds: 1,
        actor: null,
      });
    }
    await assert.rejects(
      createToken(s.ctx, expiring, {
        scopes: ["channels:read"],
        actor: subjectOfPerson(w.admin.user),
      }),
      (e: { status: number; message: string }) =>
        e.status === 422 && /Temp Bot holds/.test(e.message),
    );
    await new Promise((r) => setTimeout(r, 1_100));
    await createToken(s.ctx, expiring, { scopes: ["channels:read"], actor: null });
  }));

Deno.test("limits: names refuse invisible format characters; message bodies keep them", () =>
  withWorkspace(async (s, w) => {
    const lookalikes = ["ge\u200bneral", "\u202egeneral", "gen\u2060eral", "a\u200db"];
    for (const name of lookalikes) {
      const channel = await api(s, "POST", "/channels", {
        token: w.member.token,
        body: { name, visibility: "public" },
      });
      assertInvalid(channel, "name", JSON.stringify(name));
      assertInvalid(
        await api(s, "POST", "/webhooks", {
          token: w.member.token,
          body: { name, url: HOOK, events: ["message.created"] },
        }),
        "name",
      );
      await assert.rejects(
        createUser(s.ctx, { teamId: w.team.id, name, type: "bot" }, null),
        (e: { status: number }) => e.status === 422,
      );
      await assert.rejects(
        createToken(s.ctx, w.member.user, { scopes: ["channels:read"], name, actor: null }),
        (e: { status: number }) => e.status === 422,
      );
    }
    assertInvalid(
      await api(s, "POST", "/channels", {
        token: w.member.token,
        body: { name: "topics", visibility: "public", topic: "about \u202eevil" },
      }),
      "topic",
    );
    const family = "👩\u200d👩\u200d👧 dinner at 7\u200b";
    const posted = await api(s, "POST", `/channels/${w.team.general_channel_id}/messages`, {
      token: w.member.token,
      body: { body: family },
    });
    assertStatus(posted, 201);
    assert.equal(posted.body.data.body, family);
  }));

Deno.test("limits: /metrics labels come from a fixed set, whatever is sent", async () => {
  const s = await startServer({ METRICS_TOKEN: "metrics-token-0123456789" });
  try {
    for (const method of ["FOOBAR", "XYZZY"]) {
      const res = await fetch(`${s.url}/up`, { method });
      await res.body?.cancel();
    }
    const secret = "Zz".repeat(20);
    await (await fetch(`${s.url}/hooks/${secret}`, { method: "POST", body: "{}" })).body?.cancel();
    await (await fetch(`${s.url}/made/up/${crypto.randomUUID()}`)).body?.cancel();
    const text = await (await fetch(`${s.url}/metrics`, {
      headers: { Authorization: "Bearer metrics-token-0123456789" },
    })).text();
    assert.ok(text.includes('method="OTHER"'), "made-up methods fold into OTHER");
    for (const raw of ["FOOBAR", "XYZZY", secret, "/made/up"]) {
      assert.ok(!text.includes(raw), `${raw} is not a label value`);
    }
    assert.ok(text.includes('route="/hooks/:secret"'));
    assert.ok(text.includes('http_secret_misses_total{surface="incoming_webhook"}'));
  } finally {
    await s.close();
  }
});

Deno.test("limits: the bots page says which private conversations a bot's token will read", () =>
  withWorkspace(async (s, w) => {
    const secret = await createChannelAs(s, w.member.token, "secret-plans", "private");
    await api(s, "POST", `/channels/${secret}/members`, {
      token: w.member.token,
      body: { user_id: w.bot.user.id },
    });
    const quiet = await actor(s.ctx, w.team, "Quiet Bot", "bot");
    const cookie = await signedInCookie(s.url, s.ctx, w.admin.user.id);
    const res = await fetch(`${s.url}/settings/integrations/bots`, { headers: { Cookie: cookie } });
    const html = await res.text();
    assert.equal(res.status, 200);
    const section = (name: string) =>
      html.slice(html.indexOf(`>${name}</h2>`)).split("<section")[0];
    assert.match(section(w.bot.user.name), /Private channel: secret-plans/);
    assert.match(section(quiet.user.name), /in no private channel or direct message/);
  }));

Deno.test("limits: a team has at most 100 subscriptions, a user 25, and every commit still fits", () =>
  withWorkspace(async (s, w) => {
    const body = { name: "hook", url: HOOK, events: ["message.created", "channel.member_added"] };
    const create = (token: string) => api(s, "POST", "/webhooks", { token, body });
    const people = [w.member, w.admin, w.bot, await actor(s.ctx, w.team, "Fourth", "member")];
    for (let i = 0; i < 25; i++) assertStatus(await create(w.member.token), 201);
    const own = await create(w.member.token);
    assertInvalid(own, "request", "a 26th of one user's");
    assert.match(own.body.message, /25 subscriptions/);
    for (const p of people.slice(1)) {
      for (let i = 0; i < 25; i++) assertStatus(await create(p.token), 201);
    }
    const fifth = await actor(s.ctx, w.team, "Fifth", "member");
    const team = await create(fifth.token);
    assertInvalid(team, "request", "a 101st of the team's");
    assert.match(team.body.message, /100 subscriptions/);
    // 100 subscriptions hear a member joining: two events, a job each, in one commit.
    const channel = await createChannelAs(s, w.member.token, "busy");
    assertStatus(
      await api(s, "POST", `/channels/${channel}/members`, {
        token: w.member.token,
        body: { user_id: fifth.user.id },
      }),
      201,
    );
  }));
