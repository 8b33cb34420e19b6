/**
 * Blocks and `ts` on messages (decisions.md, "Apps that listen"): every writer may send Block Kit
 * blocks of the subset, checked with JSON pointers; without a body the blocks' text is the body;
 * events carry both; a message's Slack-style `ts` is unique in its channel and increasing, even
 * when two instances post into one channel at once.
 */
import assert from "node:assert/strict";
import { api, startServer, type TestServer, workspace } from "./harness.ts";
import { keys } from "../kv/keys.ts";
import { envelopeOf } from "../domain/views.ts";
import type { OutboxEvent } from "../core/types.ts";

const BLOCKS = [
  { type: "header", text: { type: "plain_text", text: "Deploy" } },
  {
    type: "section",
    block_id: "status",
    text: { type: "mrkdwn", text: "*prod* is green" },
    accessory: {
      type: "button",
      action_id: "redeploy",
      text: { type: "plain_text", text: "Redeploy" },
      value: "prod",
    },
  },
  { type: "divider" },
  { type: "context", elements: [{ type: "mrkdwn", text: "by the deploy bot" }] },
  {
    type: "actions",
    elements: [{
      type: "static_select",
      action_id: "env",
      options: [{ text: { type: "plain_text", text: "prod" }, value: "prod" }],
    }],
  },
];

async function withServer(fn: (s: TestServer) => Promise<void>, env: Record<string, string> = {}) {
  const s = await startServer(env);
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

Deno.test("blocks: a message of blocks alone gets their text as its body; events carry them", () =>
  withServer(async (s) => {
    const w = await workspace(s.ctx);
    const path = `/channels/${w.team.general_channel_id}/messages`;
    const posted = await api(s, "POST", path, { token: w.admin.token, body: { blocks: BLOCKS } });
    assert.equal(posted.status, 201, JSON.stringify(posted.body));
    const m = posted.body.data;
    assert.equal(m.body, "Deploy\n*prod* is green\nby the deploy bot");
    assert.equal(m.blocks.length, 5);
    assert.match(m.ts, /^\d+\.\d{6}$/);
    const events = await Array.fromAsync(s.ctx.kv.list<OutboxEvent>({ prefix: keys.events() }));
    assert.deepEqual(envelopeOf(events.at(-1)!.value).data, m, "the event carries the message");

    const edited = await api(s, "PATCH", `${path}/${m.id}`, {
      token: w.admin.token,
      body: { body: "now plain" },
    });
    assert.equal(edited.body.data.blocks, null, "an edit without blocks clears them");
    assert.equal(edited.body.data.ts, m.ts, "an edit keeps the ts");
    const again = await api(s, "PATCH", `${path}/${m.id}`, {
      token: w.admin.token,
      body: { blocks: BLOCKS.slice(0, 1) },
    });
    assert.equal(again.body.data.body, "Deploy");
    assert.equal((await api(s, "DELETE", `${path}/${m.id}`, { token: w.admin.token })).status, 204);
    const gone = await api(s, "GET", `${path}/${m.id}`, { token: w.admin.token });
    assert.equal(gone.body.data.blocks, null, "a tombstone keeps no blocks");
  }));

Deno.test("blocks: invalid ones are 422 on blocks, each fault named by its JSON pointer", () =>
  withServer(async (s) => {
    const w = await workspace(s.ctx);
    const path = `/channels/${w.team.general_channel_id}/messages`;
    const cases: [unknown, RegExp][] = [
      [[{ type: "video", title: "x" }], /^\/blocks\/0\/type: an unknown/],
      [[{ type: "image", image_url: "x" }], /^\/blocks\/0\/image_url: Invalid URL/],
      [[{ type: "section" }], /^\/blocks\/0: a section needs text or fields/],
      [
        [{ type: "section", text: { type: "mrkdwn", text: "x".repeat(3_001) } }],
        /^\/blocks\/0\/text\/text/,
      ],
      [
        [{ type: "actions", elements: [{ type: "button", text: { type: "mrkdwn", text: "x" } }] }],
        /^\/blocks\/0\/elements\/0\/text\/type/,
      ],
      [Array.from({ length: 51 }, () => ({ type: "divider" })), /^\/blocks: /],
      ["not an array", /^\/blocks: /],
      [[{
        type: "input",
        label: { type: "plain_text", text: "x" },
        element: { type: "plain_text_input" },
      }], /^\/blocks\/0\/type/],
    ];
    for (const [blocks, pointer] of cases) {
      const res = await api(s, "POST", path, { token: w.admin.token, body: { blocks } });
      assert.equal(res.status, 422, JSON.stringify(blocks).slice(0, 80));
      assert.match(res.body.errors.blocks[0], pointer, JSON.stringify(res.body));
    }
    const empty = await api(s, "POST", path, {
      token: w.admin.token,
      body: { blocks: [{ type: "divider" }] },
    });
    assert.equal(empty.status, 422, "blocks with no text and no body");
    assert.ok(empty.body.errors.body);
  }));

Deno.test("ts: unique in the channel and increasing, with two instances and threads at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ts-" });
  const path = `${dir}/kv.sqlite3`;
  const a = await startServer({ KV_PATH: path });
  const b = await startServer({ KV_PATH: path });
  try {
    const w = await workspace(a.ctx);
    const ch = `/channels/${w.team.general_channel_id}/messages`;
    const root = await api(a, "POST", ch, { token: w.admin.token, body: { body: "root" } });
    const posts = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        api(i % 2 ? a : b, "POST", ch, {
          token: w.admin.token,
          body: i % 3
            ? { body: `post ${i}` }
            : { body: `reply ${i}`, thread_root_id: root.body.data.id },
        })),
    );
    const stored = posts.map((p) => p.body.data);
    const ts = stored.map((m) => m.ts);
    assert.equal(new Set(ts).size, ts.length, "every ts once");
    const byCreation = [...stored].sort((x, y) => x.id < y.id ? -1 : 1);
    const timeline =
      (await api(a, "GET", `${ch}?per_page=100`, { token: w.admin.token })).body.data;
    const newestFirst = timeline.map((m: { ts: string }) => m.ts);
    assert.deepEqual(newestFirst, [...newestFirst].sort().reverse(), "the timeline's ts decrease");
    assert.ok(byCreation.length === 60);
    for (const m of stored) {
      const indexed = await a.ctx.kv.get<string>(keys.messageTs(m.channel_id, m.ts));
      assert.equal(indexed.value, m.id, "the ts names its message");
    }
  } finally {
    await a.close();
    await b.close();
    await Deno.remove(dir, { recursive: true });
  }
});
