import assert from "node:assert/strict";
import { turnsFile, wrapStore } from "../kv/store/open.ts";
import type { Store } from "../kv/store/store.ts";

/** Two handles on one KV file, as two instances have them, each taking turns. */
async function withTwoWriters(fn: (path: string, one: Store, other: Store) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite3`;
  const one = wrapStore(await Deno.openKv(path), path);
  const other = wrapStore(await Deno.openKv(path), path);
  try {
    await fn(path, one, other);
  } finally {
    one.close();
    other.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("write turns: two writers on one file, committing at once, lose nothing", async () => {
  await withTwoWriters(async (path, one, other) => {
    const each = 400;
    const writer = (kv: Store, name: string) =>
      Promise.all(Array.from({ length: 8 }, async (_, lane) => {
        for (let i = lane; i < each; i += 8) {
          const res = await kv.atomic()
            .set(["written", name, i], i)
            .sum(["count"], 1n)
            .commit();
          assert.ok(res.ok);
        }
      }));
    await Promise.all([writer(one, "one"), writer(other, "other")]);
    let written = 0;
    for await (const _ of one.list({ prefix: ["written"] })) written++;
    assert.equal(written, 2 * each);
    assert.equal((await one.get<Deno.KvU64>(["count"])).value?.value, BigInt(2 * each));
    assert.ok((await Deno.stat(turnsFile(path))).isFile, "the lock file sits beside the store");
  });
});

Deno.test({
  name: "write turns: a holder that never lets go holds commits up for a moment, not for good",
  // The lock call the stopped holder kept waiting ends once it lets go, after the test's end.
  sanitizeOps: false,
  async fn() {
    await withTwoWriters(async (path, one) => {
      // A process that took its turn and stopped (suspended, its event loop blocked).
      const holder = await Deno.open(turnsFile(path), { read: true, write: true });
      await holder.lock(true);
      try {
        assert.ok((await one.atomic().set(["a"], 1).commit()).ok);
        // From then on, for a while, without waiting at all.
        assert.ok((await one.atomic().set(["b"], 2).commit()).ok);
        assert.deepEqual((await one.getMany([["a"], ["b"]])).map((e) => e.value), [1, 2]);
      } finally {
        await holder.unlock();
        holder.close();
      }
    });
  },
});

Deno.test({
  name:
    "write turns: another process holding the lock past the wait and its aftermath stalls no write",
  sanitizeOps: false,
  async fn() {
    await withTwoWriters(async (path, one) => {
      // A process that took its turn and stopped for longer than the wait and the time without
      // turns together (a suspended CLI): 13 s.
      const holder = new Deno.Command(Deno.execPath(), {
        args: [
          "eval",
          `const f = await Deno.open(${
            JSON.stringify(turnsFile(path))
          }, { read: true, write: true });
           await f.lock(true); console.log("held"); await new Promise((r) => setTimeout(r, 13_000));`,
        ],
        stdout: "piped",
      }).spawn();
      const reader = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
      assert.equal((await reader.read()).value?.trim(), "held");
      try {
        let slowest = 0;
        for (const started = Date.now(); Date.now() - started < 12_500;) {
          const t0 = Date.now();
          assert.ok((await one.atomic().set(["at"], t0).commit()).ok);
          slowest = Math.max(slowest, Date.now() - t0);
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(slowest < 2_000, `a commit waited ${slowest} ms`);
      } finally {
        holder.kill();
        await holder.status;
        await reader.cancel();
      }
    });
  },
});
