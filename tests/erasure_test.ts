/**
 * Deleting erases the text (decisions.md, "Data over time"; issue 28 finding 5): once a message
 * is deleted, the feed, the stream's replay and every attempt not yet sent carry its tombstone,
 * not the text it was posted or edited with.
 */
import assert from "node:assert/strict";
import { FEED_LAG_MS } from "../domain/stream/feed.ts";
import { api, assertStatus, withWorkspace } from "./harness.ts";
import { connect } from "./sse_client.ts";
import { FAST, post, receiver, sleep, subscribe } from "./webhook_receivers.ts";

const SECRET = "the launch date is 3 March";
const carriesText = (x: unknown) => JSON.stringify(x).includes("launch date");

Deno.test("erasure: after a delete, nothing serves the text again: feed, stream replay, retries", async () => {
  // The secret's first attempt fails: its retry comes after the delete.
  let failed = false;
  const r = receiver((n) => {
    const fail = !failed && carriesText(r.hits[n].body);
    failed ||= fail;
    return new Response(null, { status: fail ? 503 : 204 });
  });
  await withWorkspace(
    async (s, w) => {
      await subscribe(s, w.admin.token, r.url, { events: ["message.created"] });
      const general = w.team.general_channel_id;
      const stream = `${s.url}/api/v1/events/stream`;
      const live = await connect(stream, w.member.token);
      await post(s, w.member.token, general, "before");
      const m = await post(s, w.admin.token, general, SECRET);
      const edit = await api(s, "PATCH", `/channels/${general}/messages/${m.id}`, {
        token: w.admin.token,
        body: { body: `${SECRET}, not 2 March` },
      });
      assertStatus(edit, 200);
      const [marker] = await live.waitFor(3);
      await live.close();
      await r.waitFor(2);
      assertStatus(
        await api(s, "DELETE", `/channels/${general}/messages/${m.id}`, { token: w.admin.token }),
        204,
      );
      await r.waitFor(3, 10_000);
      const attempts = r.hits.filter((h) => JSON.parse(h.body).data.id === m.id);
      assert.equal(attempts.length, 2);
      const retry = attempts[1];
      assert.ok(!carriesText(retry.body), `the retry after the delete: ${retry.body}`);
      assert.equal(JSON.parse(retry.body).data.body, "", "it carries the tombstone");

      const resumed = await connect(stream, w.member.token, { lastEventId: marker.id });
      const replayed = await resumed.waitFor(3);
      await resumed.close();
      assert.deepEqual(replayed.map((e) => e.event), [
        "message.created",
        "message.updated",
        "message.deleted",
      ]);
      assert.ok(!carriesText(replayed.map((e) => e.data)), "the stream's replay");

      await sleep(FEED_LAG_MS + 100);
      const feed = await api(s, "GET", "/events", { token: w.member.token });
      const created = feed.body.data.find((e: { data: { id: string } }) => e.data.id === m.id);
      assert.equal(created.data.body, "");
      assert.ok(!carriesText(feed.body), "the feed");
    },
    FAST,
    { engine: true },
  ).finally(() => r.close());
});
