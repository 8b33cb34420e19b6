import assert from "node:assert/strict";
import { api, startServer, workspace } from "./harness.ts";

Deno.test("smoke: create and list channels, members", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const created = await api(s, "POST", "/channels", {
      token: w.admin.token,
      body: { name: "#Q3 Plans!", visibility: "private" },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.data.slug, "q3-plans");
    assert.equal(created.headers.get("X-RateLimit-Limit"), "100000");
    const list = await api(s, "GET", "/channels", { token: w.admin.token });
    assert.deepEqual(list.body.data.map((c: { name: string }) => c.name), ["general", "Q3 Plans!"]);
    const add = await api(s, "POST", `/channels/${created.body.data.id}/members`, {
      token: w.admin.token,
      body: { user_id: w.bot.user.id },
    });
    assert.equal(add.status, 201, JSON.stringify(add.body));
    const members = await api(s, "GET", `/channels/${created.body.data.id}/members`, {
      token: w.bot.token,
    });
    assert.deepEqual(members.body.data.map((m: { name: string }) => m.name), [
      "Ada Admin",
      "Robo Bot",
    ]);
    const bad = await api(s, "POST", "/channels", { token: w.admin.token, raw: "[1]" });
    assert.equal(bad.status, 422);
    assert.ok(bad.body.errors.request);
    const none = await api(s, "GET", "/channels", {});
    assert.equal(none.status, 401);
    const unknown = await api(s, "GET", "/nope", { token: w.admin.token });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.message, "Not found.");
  } finally {
    await s.close();
  }
});
