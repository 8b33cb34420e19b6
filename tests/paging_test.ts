import assert from "node:assert/strict";
import { draftMessage } from "../domain/messages/draft.ts";
import type { Channel } from "../core/types.ts";
import { keys } from "../kv/keys.ts";
import { type Actor, api, type TestServer, workspace } from "./harness.ts";
import { assertInvalid, newChannel, posted, withServer } from "./message_fixtures.ts";

type Msg = { id: string; body: string };

const bodies = (list: Msg[]) => list.map((m) => m.body);
const range = (from: number, to: number) => {
  const step = from <= to ? 1 : -1;
  return Array.from({ length: Math.abs(to - from) + 1 }, (_, i) => `m${from + i * step}`);
};

async function page(s: TestServer, who: Actor, ch: string, query: string) {
  const res = await api(s, "GET", `/channels/${ch}/messages${query}`, { token: who.token });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

async function postMany(s: TestServer, who: Actor, ch: string, n: number, extra = {}) {
  const out: Msg[] = [];
  for (let i = 1; i <= n; i++) out.push(await posted(s, who, ch, { body: `m${i}`, ...extra }));
  return out;
}

Deno.test("paging: 50 per page, newest first, Laravel links and meta", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = await newChannel(s, w.member, "busy");
    await postMany(s, w.member, ch, 120);
    const path = `${s.url}/api/v1/channels/${ch}/messages`;

    const p1 = await page(s, w.member, ch, "");
    assert.deepEqual(bodies(p1.data), range(120, 71));
    assert.deepEqual(p1.links, {
      first: `${path}?page=1`,
      last: `${path}?page=3`,
      prev: null,
      next: `${path}?page=2`,
    });
    assert.equal(typeof p1.meta.next_cursor, "string");
    assert.deepEqual({ ...p1.meta, next_cursor: null }, {
      current_page: 1,
      from: 1,
      last_page: 3,
      per_page: 50,
      to: 50,
      total: 120,
      path,
      next_cursor: null,
    });
    assert.deepEqual(await page(s, w.member, ch, "?page=1"), p1);

    const p2 = await page(s, w.member, ch, "?page=2");
    assert.deepEqual(bodies(p2.data), range(70, 21));
    assert.equal(p2.links.prev, `${path}?page=1`);
    assert.equal(p2.links.next, `${path}?page=3`);
    assert.deepEqual([p2.meta.from, p2.meta.to, p2.meta.current_page], [51, 100, 2]);

    const p3 = await page(s, w.member, ch, "?page=3");
    assert.deepEqual(bodies(p3.data), range(20, 1));
    assert.equal(p3.links.next, null);
    assert.equal(p3.meta.next_cursor, null);
    assert.deepEqual([p3.meta.from, p3.meta.to], [101, 120]);

    const past = await page(s, w.member, ch, "?page=9");
    assert.deepEqual(past.data, []);
    assert.deepEqual([past.meta.from, past.meta.to, past.meta.current_page], [null, null, 9]);
    assert.equal(past.links.next, null);
    assert.equal(past.links.prev, `${path}?page=8`);

    for (const bad of ["0", "-1", "abc", "1.5", "", "1e2", "%201", "99999999999999999999"]) {
      const res = await api(s, "GET", `/channels/${ch}/messages?page=${bad}`, {
        token: w.member.token,
      });
      assertInvalid(res, "page");
    }
    const hidden = await api(s, "GET", `/channels/${ch}/messages?page=0`, { token: w.bot.token });
    assert.equal(hidden.status, 404, "the channel's 404 comes before the page's 422");
  });
});

Deno.test("paging: an empty channel has one empty page", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = await newChannel(s, w.member, "quiet");
    const p = await page(s, w.member, ch, "");
    assert.deepEqual(p.data, []);
    assert.deepEqual(p.meta, {
      current_page: 1,
      from: null,
      last_page: 1,
      per_page: 50,
      to: null,
      total: 0,
      path: `${s.url}/api/v1/channels/${ch}/messages`,
      next_cursor: null,
    });
    assert.equal(p.links.next, null);
  });
});

Deno.test("paging: cursors neither repeat nor skip while messages keep arriving", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = await newChannel(s, w.member, "live");
    const before = await postMany(s, w.member, ch, 180);

    let stop = false;
    const arrivals = (async () => {
      let n = 0;
      while (!stop) await posted(s, w.admin, ch, { body: `new ${++n}` });
      return n;
    })();

    const seen: Msg[] = [];
    let body = await page(s, w.member, ch, "");
    seen.push(...body.data);
    while (body.meta.next_cursor) {
      await posted(s, w.admin, ch, { body: "between pages" });
      const cursor = encodeURIComponent(body.meta.next_cursor);
      body = await page(s, w.member, ch, `?cursor=${cursor}&page=abc`);
      assert.ok(body.data.length <= 50);
      const next = body.meta.next_cursor;
      assert.equal(body.links.next, next ? `${body.meta.path}?cursor=${next}` : null);
      seen.push(...body.data);
    }
    stop = true;
    assert.ok(await arrivals > 0);

    const ids = seen.map((m) => m.id);
    assert.equal(new Set(ids).size, ids.length, "no message twice");
    const oldest = seen.filter((m) => before.some((b) => b.id === m.id));
    assert.deepEqual(oldest.map((m) => m.id), before.map((m) => m.id).reverse(), "none skipped");
    assert.equal(seen.at(-1)?.body, "m1");
  });
});

Deno.test("paging: tampered or foreign cursors are 422 on cursor", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = await newChannel(s, w.member, "a");
    const other = await newChannel(s, w.member, "b");
    const msgs = await postMany(s, w.member, ch, 60);
    await postMany(s, w.member, other, 60);
    const root = msgs[0];
    for (let i = 0; i < 60; i++) {
      await posted(s, w.member, ch, { body: `r${i}`, thread_root_id: root.id });
    }
    const cursor: string = (await page(s, w.member, ch, "")).meta.next_cursor;
    const foreign: string = (await page(s, w.member, other, "")).meta.next_cursor;
    const thread: string = (await page(s, w.member, ch, `?thread_root_id=${root.id}`)).meta
      .next_cursor;
    const [pos, mac] = cursor.split(".");
    const flipped = mac.slice(0, -1) + (mac.endsWith("A") ? "B" : "A");
    const tampered = [
      `${Number(pos) - 1}.${mac}`,
      `${pos}.${flipped}`,
      foreign,
      thread,
      "",
      "garbage",
      "1.",
      `${pos}`,
    ];
    for (const bad of tampered) {
      const res = await api(
        s,
        "GET",
        `/channels/${ch}/messages?cursor=${encodeURIComponent(bad)}`,
        {
          token: w.member.token,
        },
      );
      assertInvalid(res, "cursor");
    }
    const intoThread = await api(
      s,
      "GET",
      `/channels/${ch}/messages?thread_root_id=${root.id}&cursor=${encodeURIComponent(cursor)}`,
      { token: w.member.token },
    );
    assertInvalid(intoThread, "cursor");
    const valid = await page(s, w.member, ch, `?cursor=${encodeURIComponent(cursor)}`);
    assert.deepEqual(bodies(valid.data), range(10, 1));
  });
});

Deno.test("paging: a thread lists its replies oldest first, root excluded", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = await newChannel(s, w.member, "threads");
    const other = await newChannel(s, w.member, "other");
    const root = await posted(s, w.member, ch, { body: "root" });
    const foreign = await posted(s, w.member, other, { body: "foreign" });
    const replies: Msg[] = [];
    for (let i = 1; i <= 70; i++) {
      replies.push(
        await posted(s, w.admin, ch, {
          body: `m${i}`,
          thread_root_id: root.id,
          sent_to_channel: i % 10 === 0,
        }),
      );
    }
    const path = `${s.url}/api/v1/channels/${ch}/messages`;
    const q = `?thread_root_id=${root.id}`;
    const p1 = await page(s, w.member, ch, q);
    assert.deepEqual(bodies(p1.data), range(1, 50));
    assert.equal(p1.links.next, `${path}?thread_root_id=${root.id}&page=2`);
    assert.equal(p1.links.first, `${path}?thread_root_id=${root.id}&page=1`);
    assert.deepEqual([p1.meta.total, p1.meta.last_page, p1.meta.path], [70, 2, path]);
    const p2 = await page(s, w.member, ch, `${q}&page=2`);
    assert.deepEqual(bodies(p2.data), range(51, 70));
    assert.equal(p2.meta.next_cursor, null);
    const byCursor = await page(
      s,
      w.member,
      ch,
      `${q}&cursor=${encodeURIComponent(p1.meta.next_cursor)}`,
    );
    assert.deepEqual(bodies(byCursor.data), range(51, 70));
    assert.equal(byCursor.links.next, null);

    const timeline = await page(s, w.member, ch, "");
    assert.deepEqual(bodies(timeline.data), [
      "m70",
      "m60",
      "m50",
      "m40",
      "m30",
      "m20",
      "m10",
      "root",
    ]);

    const leaf = await page(s, w.member, ch, `?thread_root_id=${replies[0].id}`);
    assert.deepEqual(leaf.data, []);
    for (const bad of [foreign.id, crypto.randomUUID(), "nope", ""]) {
      const res = await api(s, "GET", `/channels/${ch}/messages?thread_root_id=${bad}`, {
        token: w.member.token,
      });
      assertInvalid(res, "thread_root_id");
    }
  });
});

Deno.test("paging: the timeline holds system notices and tombstones in place", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = await newChannel(s, w.admin, "mixed", "private");
    const first = await posted(s, w.admin, ch, { body: "first" });
    await api(s, "POST", `/channels/${ch}/members`, {
      token: w.admin.token,
      body: { user_id: w.member.user.id },
    });
    await posted(s, w.member, ch, { body: "hello" });
    await api(s, "DELETE", `/channels/${ch}/messages/${first.id}`, { token: w.admin.token });
    await api(s, "DELETE", `/channels/${ch}/members/${w.member.user.id}`, {
      token: w.member.token,
    });
    const list = await page(s, w.admin, ch, "");
    assert.deepEqual(
      list.data.map((m: { type: string; text: string }) => `${m.type}:${m.text}`),
      [
        "member_left:@Mo Member has left the channel",
        "standard:hello",
        "member_joined:@Mo Member has joined the channel",
        "standard:",
      ],
    );
  });
});

Deno.test("paging: deep pages of 10,000 messages read exactly their range", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = await newChannel(s, w.member, "archive");
    const channel = (await s.ctx.kv.get<Channel>(keys.channel(ch))).value!;
    const author = { id: w.member.user.id, name: w.member.user.name, type: "human" as const };
    const writes = [];
    for (let i = 1; i <= 10_000; i++) {
      const draft = draftMessage({ channel, author, body: `m${i}`, type: "standard" });
      writes.push(s.ctx.kv.append(draft, { checks: [] }));
      if (writes.length === 500) await Promise.all(writes.splice(0));
    }
    await Promise.all(writes);
    const p150 = await page(s, w.member, ch, "?page=150");
    assert.equal(p150.data.length, 50);
    const positions = p150.data.map((m: Msg) => Number(m.body.slice(1))).sort((
      a: number,
      b: number,
    ) => b - a);
    assert.deepEqual(positions, Array.from({ length: 50 }, (_, i) => 2550 - i));
    assert.deepEqual([p150.meta.from, p150.meta.to, p150.meta.last_page], [7451, 7500, 200]);
    const last = await page(s, w.member, ch, "?page=200");
    assert.equal(last.data.length, 50);
    assert.equal(last.meta.next_cursor, null);
  });
});

Deno.test("paging: ?limit= sizes a page and its links keep it; a parameter not taken is named", async () => {
  await withServer(async (s) => {
    const w = await workspace(s.ctx);
    const ch = await newChannel(s, w.member, "sized");
    await postMany(s, w.member, ch, 7);
    const path = `${s.url}/api/v1/channels/${ch}/messages`;

    const first = await api(s, "GET", `/channels/${ch}/messages?limit=3`, {
      token: w.member.token,
    });
    assert.deepEqual(bodies(first.body.data), range(7, 5));
    assert.equal(first.body.meta.per_page, 3);
    assert.equal(first.body.meta.last_page, 3);
    assert.equal(first.body.links.next, `${path}?limit=3&page=2`);
    assert.equal(first.headers.get("X-Ignored-Fields"), null);
    const byCursor = await page(s, w.member, ch, `?limit=3&cursor=${first.body.meta.next_cursor}`);
    assert.deepEqual(bodies(byCursor.data), range(4, 2));

    for (const bad of ["0", "101", "x"]) {
      assertInvalid(
        await api(s, "GET", `/channels/${ch}/messages?limit=${bad}`, { token: w.member.token }),
        "limit",
      );
    }
    // Slack's or Laravel's names for it, or a typo: the usual page, and the answer says why.
    const typo = await api(s, "GET", `/channels/${ch}/messages?per_page=3&limt=3`, {
      token: w.member.token,
    });
    assert.equal(typo.body.data.length, 7);
    assert.equal(typo.headers.get("X-Ignored-Fields"), "per_page, limt");
  });
});
