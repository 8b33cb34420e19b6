/**
 * An event's row stays within SQLite's in-page limit however many subscriptions hear it: past
 * about 1 KB (1,004 bytes for a 4 KiB page) a row takes an overflow page of its own for its 30
 * days, doubling what a post costs the store.
 */
import assert from "node:assert/strict";
import { serialize } from "node:v8";
import type { OutboxEvent } from "../core/types.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import { createWebhook } from "../domain/webhooks/webhooks.ts";
import { keys } from "../kv/keys.ts";
import { actor, withWorkspace } from "./harness.ts";
import { post } from "./webhook_receivers.ts";

/** SQLite's largest payload kept in a 4 KiB page of an index b-tree (Deno KV's table). */
const IN_PAGE = 1_004;
/** Subscriptions one person may own (domain/webhooks/webhooks.ts). */
const PER_OWNER = 25;

Deno.test("event rows: a post heard by 100 subscriptions stores an event row within a page", async () => {
  await withWorkspace(async (s, w) => {
    for (let owner = 0; owner < 100 / PER_OWNER; owner++) {
      const { token } = await actor(s.ctx, w.team, `Owner ${owner}`, "member");
      const subject = await authenticate(s.ctx, token);
      for (let i = 0; i < PER_OWNER; i++) {
        await createWebhook(s.ctx, subject, {
          name: `hook ${owner}.${i}`,
          url: "http://127.0.0.1:9/hook",
          events: ["message.created"],
          channel_ids: [w.team.general_channel_id],
        });
      }
    }
    const message = await post(
      s,
      w.admin.token,
      w.team.general_channel_id,
      "Heard by a hundred: the quick brown fox jumps over the lazy dog, twice over, for size.",
    );
    const rows = await Array.fromAsync(s.ctx.kv.list<OutboxEvent>({ prefix: keys.events() }));
    const row = rows.find((e) => (e.value.data as { id?: string }).id === message.id)!;
    let jobs = 0;
    for await (const _ of s.ctx.kv.list({ prefix: keys.jobs() })) jobs++;
    assert.equal(jobs, 100, "each subscription has its job");
    assert.equal(row.value.subscription_ids, undefined);
    const size = serialize(row.key).length + serialize(row.value).length;
    console.log(`event rows: ${size} bytes heard by 100`);
    assert.ok(size < IN_PAGE, `the row is ${size} bytes`);
  }, { WEBHOOKS_ALLOW_PRIVATE_URLS: "true" });
});
