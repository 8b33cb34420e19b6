/**
 * A store without KV queues (KV Connect, the new Deno Deploy): nothing may be enqueued, since an
 * enqueue fails the commit it rides in, and the sweeper alone wakes retries and redeliveries.
 */
import assert from "node:assert/strict";
import { probeQueues } from "../kv/store/queue_support.ts";
import { api, startServer, workspace } from "./harness.ts";
import { post, receiver, show, subscribe, waitUntil } from "./webhook_receivers.ts";

Deno.test("queueless: a KV Connect URL turns queues off; a local store has them", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    assert.equal(await probeQueues(kv, "https://kv.example.com/v2/databases/x/connect"), false);
    assert.equal(await probeQueues(kv, ":memory:"), true);
  } finally {
    kv.close();
  }
});

Deno.test("queueless: retries and redeliveries still happen, woken by the sweeper", async () => {
  const s = await startServer(
    { WEBHOOKS_BACKOFF: "100ms,100ms", WEBHOOKS_TIMEOUT: "0.5" },
    { engine: { sweepEveryMs: 50 } },
  );
  // As a KV Connect store's probe would find: nothing is enqueued from here on.
  s.ctx.kv.forgoQueues();
  const hook = receiver((n) => new Response(null, { status: n === 0 ? 500 : 204 }));
  try {
    assert.equal(s.ctx.kv.queues, false);
    const w = await workspace(s.ctx);
    const { id } = await subscribe(s, w.admin.token, hook.url);
    const message = await post(s, w.admin.token, w.team.general_channel_id, "hello");
    const [first, retry] = await hook.waitFor(2);
    assert.equal(JSON.parse(first.body).data.id, message.id);
    assert.equal(retry.body, first.body, "the retry carries the same envelope");

    await waitUntil(async () => (await show(s, w.admin.token, id)).deliveries.length === 2, 2_000);
    const [latest] = (await show(s, w.admin.token, id)).deliveries;
    const again = await api(
      s,
      "POST",
      `/webhooks/${id}/deliveries/${latest.id}/redeliver`,
      { token: w.admin.token },
    );
    assert.equal(again.status, 202, JSON.stringify(again.body));
    await hook.waitFor(3);
  } finally {
    await hook.close();
    await s.close();
  }
});
