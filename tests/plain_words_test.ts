/**
 * What the service says when there is little to say: each message names what happened in the
 * words of whoever reads it (issue 31's small findings).
 */
import assert from "node:assert/strict";
import { ApiError } from "../core/errors.ts";
import { createLoginLink, signIn } from "../domain/people/sessions.ts";
import { api, createChannelAs, withWorkspace, workspace } from "./harness.ts";
import { sharedStore, startService } from "./processes.ts";
import { receiver, show, subscribe, waitUntil } from "./webhook_receivers.ts";

Deno.test("plain words: a recover with nothing failed says so", () =>
  withWorkspace(async (s, w) => {
    const hook = receiver();
    try {
      const sub = await subscribe(s, w.admin.token, hook.url);
      const res = await api(s, "POST", `/webhooks/${sub.id}/recover`, {
        token: w.admin.token,
        body: { since: new Date(Date.now() - 60_000).toISOString() },
      });
      assert.equal(res.status, 202);
      assert.deepEqual(res.body, {
        message: "No event has failed for good since then: nothing to send again.",
        events: 0,
      });
    } finally {
      await hook.close();
    }
  }));

Deno.test("plain words: a recover while retries are still due says so", () =>
  withWorkspace(
    async (s, w) => {
      const down = receiver(() => new Response(null, { status: 503 }));
      try {
        const sub = await subscribe(s, w.admin.token, down.url);
        await api(s, "POST", `/channels/${w.team.general_channel_id}/messages`, {
          token: w.admin.token,
          body: { body: "into the outage" },
        });
        await down.waitFor(1);
        // The receiver's 503 is heard before the attempt is recorded with its retry: a busy
        // machine ran the recover between the two.
        await waitUntil(
          async () => (await show(s, w.admin.token, sub.id)).deliveries.length === 1,
          10_000,
          "the failed attempt recorded",
        );
        const res = await api(s, "POST", `/webhooks/${sub.id}/recover`, {
          token: w.admin.token,
          body: { since: new Date(Date.now() - 60_000).toISOString() },
        });
        assert.equal(res.body.events, 0);
        assert.match(res.body.message, /1 delivery is still being retried on schedule/);
      } finally {
        await down.close();
      }
    },
    { WEBHOOKS_BACKOFF: "1h" },
    { engine: true },
  ));

Deno.test("plain words: a used sign-in link sends its person to whoever runs the service", () =>
  withWorkspace(async (s, w) => {
    const { url } = await createLoginLink(s.ctx, w.admin.user.id);
    const secret = url.split("/").at(-1)!;
    await signIn(s.ctx, secret);
    const again = await signIn(s.ctx, secret).catch((e) => e);
    assert.ok(again instanceof ApiError && again.status === 410);
    assert.match(again.message, /already used\. Ask whoever runs this service for a new one/);
  }));

Deno.test("plain words: a test ping is logged as a test, not as a redelivery", async () => {
  const store = await sharedStore();
  const service = await startService({ ...store.env, LOG_LEVEL: "info", LOG_FORMAT: "json" });
  const hook = receiver();
  try {
    const w = await workspace(store.ctx);
    const s = { ctx: store.ctx, url: service.url, close: () => Promise.resolve() };
    const sub = await subscribe(s, w.admin.token, hook.url);
    const res = await api(s, "POST", `/webhooks/${sub.id}/test`, { token: w.admin.token });
    assert.equal(res.status, 202);
    await waitUntil(() => hook.hits.length === 1, 5_000, "the ping");
    await waitUntil(() => service.output().includes('"msg":"delivery attempt"'), 5_000, "its log");
    const line = service.output().split("\n").find((l) => l.includes('"msg":"delivery attempt"'))!;
    assert.equal(JSON.parse(line).attempt, "test");
  } finally {
    await hook.close();
    await service.kill();
    await store.cleanup();
  }
});

Deno.test("plain words: a channel's 404 tells a bot why; hidden and missing read alike to each caller", () =>
  withWorkspace(async (s, w) => {
    const general = w.team.general_channel_id;
    const secret = await createChannelAs(s, w.admin.token, "secret", "private");
    const asBot = await api(s, "POST", `/channels/${general}/messages`, {
      token: w.bot.token,
      body: { body: "hello" },
    });
    assert.equal(asBot.status, 404);
    assert.match(asBot.body.message, /A bot sees only the channels it has been added to/);
    const botNowhere = await api(s, "GET", `/channels/${crypto.randomUUID()}`, {
      token: w.bot.token,
    });
    assert.equal(botNowhere.body.message, asBot.body.message, "nothing tells the two apart");
    const hidden = await api(s, "GET", `/channels/${secret}`, { token: w.member.token });
    const nowhere = await api(s, "GET", `/channels/${crypto.randomUUID()}`, {
      token: w.member.token,
    });
    assert.equal(hidden.status, 404);
    assert.equal(nowhere.body.message, hidden.body.message, "nothing tells the two apart");
    assert.doesNotMatch(nowhere.body.message, /bot/, "a person isn't told about bots");
    // Not an id at all: the answer says what ids look like and where to find them.
    const named = await api(s, "GET", "/channels/general", { token: w.member.token });
    assert.equal(named.status, 404);
    assert.match(
      named.body.message,
      /"general" is not a channel id\. Ids are UUIDs; GET \/api\/v1\/channels lists yours/,
    );
  }));
