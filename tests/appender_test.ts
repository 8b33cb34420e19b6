import assert from "node:assert/strict";
import { draftMessage } from "../domain/messages/draft.ts";
import type { Channel, Message } from "../core/types.ts";
import { keys } from "../kv/keys.ts";
import { wrapStore } from "../kv/store/open.ts";
import { api, countKeys, startServer, workspace } from "./harness.ts";
import type { Store } from "../kv/store/store.ts";

/** A workspace's general channel on a KV file, and the ways to write messages into it. */
async function withChannel(fn: (kv: Store, path: string, channel: Channel) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  const s = await startServer({ KV_PATH: `${dir}/kv.sqlite3` });
  try {
    const w = await workspace(s.ctx);
    const channel = (await s.ctx.kv.get<Channel>(keys.channel(w.team.general_channel_id))).value!;
    await fn(s.ctx.kv, `${dir}/kv.sqlite3`, channel);
  } finally {
    await s.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const draft = (channel: Channel, body: string) =>
  draftMessage({
    channel,
    author: { id: crypto.randomUUID(), name: "Writer", type: "human" },
    body,
    type: "standard",
  });

async function timeline(kv: Store, channelId: string): Promise<Message[]> {
  const out: Message[] = [];
  for await (const e of kv.list<Message>({ prefix: keys.timeline(channelId) })) out.push(e.value);
  return out;
}

function assertDense(list: Message[]) {
  assert.deepEqual(list.map((m) => m.timeline_pos), list.map((_, i) => i + 1));
}

Deno.test("appender: two writers on one KV file share a timeline without gaps or doubles", async () => {
  await withChannel(async (kv, path, channel) => {
    // Two handles, as two instances would have, each with its own appender.
    const one = wrapStore(await Deno.openKv(path), path, { turns: false });
    const other = wrapStore(await Deno.openKv(path), path, { turns: false });
    try {
      const before = (await timeline(kv, channel.id)).length;
      const writes = Array.from(
        { length: 300 },
        (_, i) => (i % 2 ? one : other).append(draft(channel, `m${i}`), { checks: [] }),
      );
      const stored = await Promise.all(writes);
      assert.ok(stored.every((m) => m !== null));
      const list = await timeline(kv, channel.id);
      assert.equal(list.length, before + 300);
      assertDense(list);
      assert.equal(new Set(list.map((m) => m.id)).size, list.length);
      const length = await kv.get<Deno.KvU64>(keys.timelineLen(channel.id));
      assert.equal(length.value?.value, BigInt(list.length));
    } finally {
      one.close();
      other.close();
    }
  });
});

Deno.test("appender: a failed precondition refuses that append only", async () => {
  await withChannel(async (kv, _path, channel) => {
    const stale = await kv.get<Channel>(keys.channel(channel.id));
    await kv.set(keys.channel(channel.id), { ...channel, topic: "changed" });
    const writes = Array.from({ length: 40 }, (_, i) =>
      kv.append(draft(channel, `m${i}`), {
        checks: i === 20 ? [stale] : [],
      }));
    const stored = await Promise.all(writes);
    assert.deepEqual(stored.map((m, i) => (m === null) === (i === 20)), stored.map(() => true));
    const list = await timeline(kv, channel.id);
    assertDense(list);
    assert.ok(!list.some((m) => m.body === "m20"));
  });
});

Deno.test("appender: appends that overflow one commit's limits still all land", async () => {
  await withChannel(async (kv, _path, channel) => {
    const before = (await timeline(kv, channel.id)).length;
    const extra = (n: number, m: Message) => {
      const op = kv.atomic();
      for (let i = 0; i < n; i++) op.set(["test_fanout", m.id, i], i);
      return op;
    };
    const big = "é".repeat(4_000);
    const writes = Array.from(
      { length: 30 },
      (_, i) => {
        const d = draft(channel, i % 2 ? big : `m${i}`);
        return kv.append(d, { checks: [], with: extra(200, d) });
      },
    );
    assert.ok((await Promise.all(writes)).every((m) => m !== null));
    const list = await timeline(kv, channel.id);
    assert.equal(list.length, before + 30);
    assertDense(list);
    assert.equal(await countKeys(kv, ["test_fanout"]), 30 * 200);
  });
});

/** Posts 40 messages with client_uuids at once through `kv`; returns how many commits carried them. */
async function commitsFor40ClientUuids(kv: Store, channel: Channel): Promise<number> {
  const atomic = kv.atomic.bind(kv);
  let commits = 0;
  // Counts commits only; each goes to the real store.
  kv.atomic = () => (commits++, atomic());
  try {
    const writes = Array.from(
      { length: 40 },
      (_, i) =>
        kv.append({ ...draft(channel, `m${i}`), client_uuid: crypto.randomUUID() }, {
          checks: [],
          indexClientUuid: true,
        }),
    );
    assert.ok((await Promise.all(writes)).every((m) => m !== null));
    return commits;
  } finally {
    kv.atomic = atomic;
  }
}

Deno.test("appender: posts with a client_uuid share commits up to what the store allows", async () => {
  await withChannel(async (kv, path, channel) => {
    // The embedded store allows 100 checks a commit: one per client_uuid, one per list.
    assert.ok(await commitsFor40ClientUuids(kv, channel) <= 3);
    // A store declared remote (KV Connect allows 10): at most 9 client_uuids a commit.
    const remote = wrapStore(await Deno.openKv(path), "https://kv.example.test/db");
    try {
      assert.ok(await commitsFor40ClientUuids(remote, channel) >= 5);
    } finally {
      remote.close();
    }
    const list = await timeline(kv, channel.id);
    assertDense(list);
    assert.equal(await countKeys(kv, ["client_uuids"]), 80);
  });
});

Deno.test("appender: replies into fifteen threads at once, on a store this process never read, all land", async () => {
  // Issue 65, item 9: a process that holds no thread's length reads them all in one batch, which
  // went to Deno KV as one getMany of 15 keys and answered 500 ("Too many ranges (max 10)").
  const dir = await Deno.makeTempDir();
  const env = { KV_PATH: `${dir}/kv.sqlite3` };
  try {
    const first = await startServer(env);
    const w = await workspace(first.ctx);
    const general = w.team.general_channel_id;
    const roots: string[] = [];
    for (let i = 0; i < 15; i++) {
      const posted = await api(first, "POST", `/channels/${general}/messages`, {
        token: w.admin.token,
        body: { body: `root ${i}` },
      });
      roots.push(posted.body.data.id);
    }
    await first.close();
    const restarted = await startServer(env);
    try {
      const replies = await Promise.all(
        roots.map((root, i) =>
          api(restarted, "POST", `/channels/${general}/messages`, {
            token: w.admin.token,
            body: { body: `reply ${i}`, thread_root_id: root },
          })
        ),
      );
      assert.deepEqual(replies.map((r) => r.status), roots.map(() => 201));
    } finally {
      await restarted.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
