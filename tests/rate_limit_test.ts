/** The rate limit held across instances: two limiters on two handles of one KV file. */
import assert from "node:assert/strict";
import { RateLimiter } from "../domain/guards/rate_limit.ts";
import { wrapStore } from "../kv/store/open.ts";
import { clearOfWindowEdge } from "./harness.ts";

async function twoHandles() {
  const dir = await Deno.makeTempDir({ prefix: "rate_limit_" });
  // Wrapped as openStore wraps them: two handles on one file meet SQLite's lock as processes do.
  const a = wrapStore(await Deno.openKv(`${dir}/kv.sqlite3`), `${dir}/kv.sqlite3`, {
    turns: false,
  });
  const b = wrapStore(await Deno.openKv(`${dir}/kv.sqlite3`), `${dir}/kv.sqlite3`, {
    turns: false,
  });
  return {
    a,
    b,
    async close() {
      a.close();
      b.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("rate limit: a single instance admits exactly the limit", async () => {
  await clearOfWindowEdge();
  const kv = wrapStore(await Deno.openKv(":memory:"), ":memory:");
  const limiter = new RateLimiter(kv, 60);
  try {
    const verdicts = [];
    for (let i = 0; i < 100; i++) verdicts.push(await limiter.hit("token:t"));
    assert.equal(verdicts.filter((v) => v.allowed).length, 60);
    assert.deepEqual(
      verdicts.slice(0, 60).map((v) => v.remaining),
      [...Array(60).keys()].reverse(),
    );
    assert.equal(verdicts[60].remaining, 0);
    assert.equal((await limiter.hit("token:other")).allowed, true, "each name has its own budget");
  } finally {
    await limiter.close();
    kv.close();
  }
});

Deno.test("rate limit: two instances on one store admit the limit between them", async () => {
  await clearOfWindowEdge();
  const store = await twoHandles();
  const one = new RateLimiter(store.a, 60);
  const two = new RateLimiter(store.b, 60);
  try {
    const hits = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? one : two).hit("token:shared")),
    );
    const admitted = hits.filter((v) => v.allowed).length;
    assert.equal(admitted, 60, "claims never overlap, and together they take the whole limit");
  } finally {
    await one.close();
    await two.close();
    await store.close();
  }
});
