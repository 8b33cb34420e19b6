/**
 * A member's channel list kept in memory (domain/channels/channel_list.ts, issue 44) is never
 * stale: two services on one store, each with the list of the other's member in memory, see at
 * once a channel made, joined, archived and left through the other, and through the CLI; pages
 * and their cursors hold across a change.
 */
import assert from "node:assert/strict";
import { RecentMap } from "../core/recent_map.ts";
import { cli, type Service, sharedStore, startService } from "./processes.ts";
import { workspace } from "./harness.ts";

const listed = async (s: Service, token: string, query = "") => {
  const res = await fetch(`${s.url}/api/v1/channels${query}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  assert.equal(res.status, 200);
  return await res.json();
};
const names = async (s: Service, token: string) =>
  (await listed(s, token)).data.map((c: { name: string; is_archived: boolean }) =>
    `${c.name}${c.is_archived ? " (archived)" : ""}`
  );

async function call(s: Service, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${s.url}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${await res.clone().text()}`);
  return res.status === 204 ? null : (await res.json()).data;
}

Deno.test("channel list: what another process changes shows at once, however it was kept", async () => {
  const store = await sharedStore();
  const [a, b] = [await startService(store.env), await startService(store.env)];
  try {
    const w = await workspace(store.ctx);
    const mo = w.member.token;
    assert.deepEqual(await names(a, mo), ["general"]);
    assert.deepEqual(await names(b, mo), ["general"]);
    const made = await call(b, mo, "POST", "/channels", { name: "beta", visibility: "public" });
    assert.deepEqual(await names(a, mo), ["beta", "general"], "made elsewhere");
    const other = await call(b, w.admin.token, "POST", "/channels", {
      name: "alpha",
      visibility: "private",
    });
    assert.deepEqual(await names(a, mo), ["beta", "general"], "not a member");
    await cli(store.env, "member:add", "--channel", other.id, "--user", w.member.user.id);
    assert.deepEqual(await names(a, mo), ["alpha", "beta", "general"], "joined, by the CLI");
    await call(b, mo, "POST", `/channels/${made.id}/archive`);
    assert.deepEqual(await names(a, mo), ["alpha", "beta (archived)", "general"], "archived");
    await call(b, mo, "DELETE", `/channels/${other.id}/members/${w.member.user.id}`);
    assert.deepEqual(await names(a, mo), ["beta (archived)", "general"], "left elsewhere");
  } finally {
    await a.kill();
    await b.kill();
    await store.cleanup();
  }
});

Deno.test("channel list: a cursor holds across a change; a burst of requests all get the list", async () => {
  const store = await sharedStore();
  const s = await startService(store.env);
  try {
    const w = await workspace(store.ctx);
    const mo = w.member.token;
    for (const name of ["c1", "c3", "c5"]) {
      await call(s, mo, "POST", "/channels", { name, visibility: "public" });
    }
    const first = await listed(s, mo, "?limit=2");
    assert.deepEqual(first.data.map((c: { name: string }) => c.name), ["c1", "c3"]);
    // A channel made after the cursor's place, and one before it: the page goes on from its place.
    for (const name of ["c0", "c4"]) {
      await call(s, mo, "POST", "/channels", { name, visibility: "public" });
    }
    const cursor = encodeURIComponent(first.meta.next_cursor);
    const next = await listed(s, mo, `?limit=2&cursor=${cursor}`);
    assert.deepEqual(next.data.map((c: { name: string }) => c.name), ["c4", "c5"]);
    const all = await Promise.all(Array.from({ length: 20 }, () => names(s, mo)));
    for (const list of all) assert.deepEqual(list, ["c0", "c1", "c3", "c4", "c5", "general"]);
  } finally {
    await s.kill();
    await store.cleanup();
  }
});

Deno.test("channel list: the lists kept weigh what they hold, the newest always kept", () => {
  const lists = new RecentMap<string, string[]>(10, (l) => l.length);
  lists.set("a", ["1", "2", "3", "4"]);
  lists.set("b", ["1", "2", "3", "4"]);
  lists.set("c", ["1", "2", "3"]);
  assert.equal(lists.has("a"), false, "the oldest went to make room");
  assert.equal(lists.has("b") && lists.has("c"), true);
  lists.set("huge", Array.from({ length: 50 }, String));
  assert.equal(lists.has("huge"), true, "heavier than all: kept alone, for its caller");
  assert.equal(lists.has("b") || lists.has("c"), false);
  lists.set("c", ["1"]);
  assert.equal(lists.has("huge"), false);
});
