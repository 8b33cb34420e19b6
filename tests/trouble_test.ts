/**
 * The owner hears of trouble before it's too late (decisions.md, "Delivery"): a direct message
 * from the team's "Integrations" bot when a subscription's failures in a row reach half the
 * limit, and when it is disabled; for a bot's subscription, the team's admins hear. The bot joins
 * no channel and is never given a token.
 */
import assert from "node:assert/strict";
import {
  api,
  assertInvalid,
  type TestServer,
  toldTo,
  withWorkspace,
  type Workspace,
} from "./harness.ts";
import { FAST, receiver, subscribe, waitUntil } from "./webhook_receivers.ts";
import { systemBot } from "../domain/people/integrations_bot.ts";
import { createToken } from "../domain/people/tokens.ts";
import { ApiError } from "../core/errors.ts";

const post = (s: TestServer, w: Workspace, channel: string, n: number) =>
  api(s, "POST", `/channels/${channel}/messages`, {
    token: w.admin.token,
    body: { body: `event ${n}` },
  });

Deno.test("trouble: the owner is told at half the limit and at disabling, once each", async () => {
  const failing = receiver(() => new Response("down for maintenance", { status: 500 }));
  try {
    await withWorkspace(
      async (s, w) => {
        const channel = w.team.general_channel_id;
        const sub = await subscribe(s, w.member.token, failing.url, { name: "CI hook" });
        for (let i = 0; i < 2; i++) await post(s, w, channel, i);
        let told: string[] = [];
        await waitUntil(
          async () => (told = await toldTo(s, w.member.token)).length >= 1,
          10_000,
          "a warning",
        );
        assert.equal(told.length, 1);
        assert.match(
          told[0],
          /"CI hook" .* has failed 2 times in a row; the last answer was HTTP 500/,
        );
        assert.match(told[0], /After 4 it is disabled/);
        for (let i = 2; i < 6; i++) await post(s, w, channel, i);
        await waitUntil(
          async () => (told = await toldTo(s, w.member.token)).length >= 2,
          10_000,
          "disabled",
        );
        await new Promise((done) => setTimeout(done, 500));
        told = await toldTo(s, w.member.token);
        assert.equal(told.length, 2, JSON.stringify(told));
        assert.match(told[1], /is disabled after 4 failures in a row/);
        assert.match(told[1], new RegExp(`webhook:enable --id ${sub.id}`));
        assert.deepEqual(await toldTo(s, w.admin.token), [], "the owner alone, for a person's");
      },
      { ...FAST, WEBHOOKS_DISABLE_AFTER: "4", WEBHOOKS_MAX_ATTEMPTS: "1" },
      { engine: true },
    );
  } finally {
    await failing.close();
  }
});

Deno.test("trouble: a bot's subscription tells the team's admins; the Integrations bot joins nothing and holds no token", async () => {
  const failing = receiver(() => new Response(null, { status: 503 }));
  try {
    await withWorkspace(
      async (s, w) => {
        const channel = w.team.general_channel_id;
        await api(s, "POST", `/channels/${channel}/members`, {
          token: w.admin.token,
          body: { user_id: w.bot.user.id },
        });
        await subscribe(s, w.bot.token, failing.url, { channel_ids: [channel] });
        for (let i = 0; i < 2; i++) await post(s, w, channel, i);
        await waitUntil(async () => (await toldTo(s, w.admin.token)).length === 1, 10_000, "admin");
        assert.deepEqual(await toldTo(s, w.member.token), []);

        const bot = await systemBot(s.ctx, w.team);
        assert.equal(bot.name, "Integrations");
        const joined = await api(s, "POST", `/channels/${channel}/members`, {
          token: w.admin.token,
          body: { user_id: bot.id },
        });
        assertInvalid(joined, "user_id");
        await assert.rejects(
          createToken(s.ctx, bot, { scopes: ["channels:read"], actor: null }),
          (e: ApiError) => e.status === 422,
        );
      },
      { ...FAST, WEBHOOKS_DISABLE_AFTER: "4", WEBHOOKS_MAX_ATTEMPTS: "1" },
      { engine: true },
    );
  } finally {
    await failing.close();
  }
});
