import assert from "node:assert/strict";
import { wrapStore } from "../kv/store/open.ts";
import type { Store } from "../kv/store/store.ts";

async function withKv(fn: (kv: Store) => Promise<void>) {
  const kv = wrapStore(await Deno.openKv(":memory:"), ":memory:");
  try {
    await fn(kv);
  } finally {
    kv.close();
  }
}

Deno.test("read coalescer: each caller gets its own entries, in its own order", async () => {
  await withKv(async (kv) => {
    for (let i = 0; i < 30; i++) await kv.set(["k", i], { i });
    const asks = Array.from({ length: 40 }, (_, n) => {
      const wanted = Array.from({ length: 1 + (n % 7) }, (_, j) => ["k", (n * 3 + j * 5) % 31]);
      return { wanted, got: kv.getMany<{ i: number }[]>(wanted) };
    });
    for (const { wanted, got } of asks) {
      const entries = await got;
      assert.deepEqual(entries.map((e) => e.key), wanted);
      for (const [j, e] of entries.entries()) {
        const i = wanted[j][1] as number;
        assert.deepEqual(e.value, i < 30 ? { i } : null);
      }
    }
    const single = await Promise.all([kv.get(["k", 1]), kv.get(["k", 2]), kv.get(["none"])]);
    assert.deepEqual(single.map((e) => e.value), [{ i: 1 }, { i: 2 }, null]);
  });
});

Deno.test("read coalescer: readers of one key share its entry, frozen so that none can change it", async () => {
  await withKv(async (kv) => {
    await kv.set(["shared"], { list: [1] });
    await kv.set(["count"], new Deno.KvU64(7n));
    // The first read goes alone; the three after it share one getMany.
    const [, a, b, c] = await Promise.all([
      kv.get(["first"]),
      kv.get<{ list: number[] }>(["shared"]),
      kv.get<{ list: number[] }>(["shared"]),
      kv.getMany<[Deno.KvU64, Deno.KvU64]>([["count"], ["count"]]),
    ]);
    assert.equal(a.value, b.value, "one object, not a copy per reader");
    assert.throws(() => a.value!.list.push(2), TypeError);
    assert.deepEqual(b.value, { list: [1] });
    assert.equal(a.versionstamp, b.versionstamp);
    assert.ok(c[1].value instanceof Deno.KvU64);
    assert.equal(c[1].value.value, 7n);
    // A reader alone gets its entry as read, to do with as it likes.
    const alone = await kv.get<{ list: number[] }>(["shared"]);
    alone.value!.list.push(2);
    assert.deepEqual(alone.value, { list: [1, 2] });
  });
});

Deno.test("read coalescer: packs a wave of reads into full getMany calls, identical reads once", async () => {
  const raw = await Deno.openKv(":memory:");
  const calls: number[] = [];
  const getMany = raw.getMany.bind(raw);
  // Counts the store's own reads of the Deno KV it wraps; every one still goes to it.
  raw.getMany = ((keys: Deno.KvKey[]) => {
    calls.push(keys.length);
    return getMany(keys);
  }) as Deno.Kv["getMany"];
  const kv = wrapStore(raw, ":memory:");
  try {
    for (let i = 0; i < 50; i++) await raw.set(["k", i], i);
    const first = kv.get(["k", 0]);
    // While the first is in flight: 40 reads of 5 keys each, 10 sets of keys asked 4 times each.
    const reads = Array.from(
      { length: 40 },
      (_, i) => kv.getMany(Array.from({ length: 5 }, (_, j) => ["k", ((i >> 1) * 5 + j) % 50])),
    );
    const got = await Promise.all([first, ...reads]);
    assert.deepEqual(
      got.slice(1).map((es) => (es as Deno.KvEntryMaybe<number>[])[0].value),
      reads.map((_, i) => ((i >> 1) * 5) % 50),
    );
    assert.deepEqual(
      calls,
      [1, ...Array(5).fill(10)],
      "the lone read, then 50 distinct keys in 5 calls",
    );
  } finally {
    raw.close();
  }
});

Deno.test("read coalescer: a read asked after a commit sees it, though a read was in flight", async () => {
  await withKv(async (kv) => {
    await kv.set(["x"], 1);
    for (let round = 2; round < 50; round++) {
      const early = kv.get(["x"]);
      await kv.set(["x"], round);
      const late = await kv.get<number>(["x"]);
      assert.equal(late.value, round);
      assert.ok([round - 1, round].includes((await early).value as number));
    }
  });
});

Deno.test("read coalescer: a bad key fails only the read that asked for it", async () => {
  await withKv(async (kv) => {
    await kv.set(["ok"], 1);
    const tooLong = ["k", "x".repeat(3_000)];
    const [bad, good] = await Promise.allSettled([kv.get(tooLong), kv.get(["ok"])]);
    assert.equal(bad.status, "rejected");
    assert.equal(good.status === "fulfilled" && good.value.value, 1);
    assert.equal((await kv.get(["ok"])).value, 1);
  });
});

/** Reads through a store of the kind `path` names; the most getMany calls at once. */
async function mostAtOnce(path: string): Promise<number> {
  const raw = await Deno.openKv(":memory:");
  try {
    const getMany = raw.getMany.bind(raw);
    let now = 0;
    let most = 0;
    // Counts calls under way; every call still goes to the real store.
    raw.getMany = (async (...args: Parameters<Deno.Kv["getMany"]>) => {
      most = Math.max(most, ++now);
      try {
        await new Promise((r) => setTimeout(r, 5));
        return await getMany(...args);
      } finally {
        now--;
      }
    }) as Deno.Kv["getMany"];
    const kv = wrapStore(raw, path);
    for (let i = 0; i < 4; i++) {
      await Promise.all([
        kv.get(["a", i]),
        new Promise((r) => setTimeout(r, 1)).then(() => kv.get(["b", i])),
      ]);
    }
    return most;
  } finally {
    raw.close();
  }
}

Deno.test("read coalescer: reads wait for the wave in flight on the embedded store, not on a remote one", async () => {
  assert.equal(await mostAtOnce(":memory:"), 1);
  assert.equal(await mostAtOnce("https://kv.example.test/db"), 2);
});
