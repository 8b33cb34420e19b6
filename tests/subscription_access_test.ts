/**
 * Who may see and act on a subscription (decisions: "Who may see and act on a subscription"):
 * its owner and the team's admins see it; nobody but the owner changes where it delivers or what
 * it hears. Each test first does what an attacker did against the old rule.
 */
import assert from "node:assert/strict";
import { actor, api, assertStatus, createChannelAs, withWorkspace } from "./harness.ts";
import { post, receiver, show, subscribe, waitUntil } from "./webhook_receivers.ts";
import { createDirectChannel } from "../domain/channels/channels.ts";

const sameApartFromIds = (a: unknown, b: unknown) =>
  assert.deepEqual(
    JSON.stringify(a).replace(/[0-9a-f-]{36}/g, "<id>"),
    JSON.stringify(b).replace(/[0-9a-f-]{36}/g, "<id>"),
  );

Deno.test(
  "subscription access: a member, a bot or an admin can't take over someone's subscription",
  () => {
    const owners = receiver();
    const thief = receiver();
    return withWorkspace(
      async (s, w) => {
        const owner = w.member;
        const eve = await actor(s.ctx, w.team, "Eve Member", "member");
        const secret = await createChannelAs(s, owner.token, "secret-plans", "private");
        const dm = await createDirectChannel(s.ctx, [owner.user, w.admin.user]);
        const sub = await subscribe(s, owner.token, owners.url, { name: "Mo's hook" });
        await post(s, owner.token, secret, "private words");
        await post(s, owner.token, dm.id, "direct words");
        await owners.waitFor(2);
        await waitUntil(async () => (await show(s, owner.token, sub.id)).deliveries.length === 2);
        const [delivery] = (await show(s, owner.token, sub.id)).deliveries;
        const since = new Date(Date.now() - 60_000).toISOString();

        const unknown = crypto.randomUUID();
        const answers = {
          show: await api(s, "GET", `/webhooks/${unknown}`, { token: eve.token }),
        };
        for (const who of [eve, w.bot]) {
          const listed = await api(s, "GET", "/webhooks", { token: who.token });
          assert.deepEqual(listed.body.data, [], "someone else's subscription is not listed");
          const calls: [string, string, unknown][] = [
            ["GET", `/webhooks/${sub.id}`, undefined],
            ["PATCH", `/webhooks/${sub.id}`, { url: thief.url }],
            ["POST", `/webhooks/${sub.id}/deliveries/${delivery.id}/redeliver`, undefined],
            ["POST", `/webhooks/${sub.id}/recover`, { since }],
            ["POST", `/webhooks/${sub.id}/test`, undefined],
            ["DELETE", `/webhooks/${sub.id}`, undefined],
          ];
          for (const [method, path, body] of calls) {
            const res = await api(s, method, path, { token: who.token, body });
            assertStatus(res, 404, `${who.user.name}: ${method} ${path}`);
            sameApartFromIds(res.body, answers.show.body);
          }
        }

        const admin = w.admin.token;
        for (
          const body of [{ url: thief.url }, { events: ["reaction.added"] }, {
            channel_ids: [w.team.general_channel_id],
          }, { channel_ids: null }]
        ) {
          const res = await api(s, "PATCH", `/webhooks/${sub.id}`, { token: admin, body });
          assertStatus(res, 403, `admin PATCH ${JSON.stringify(body)}`);
        }
        const renamed = await api(s, "PATCH", `/webhooks/${sub.id}`, {
          token: admin,
          body: { name: "Mo's hook (checked by Ada)" },
        });
        assertStatus(renamed, 200, "an admin may rename");
        assert.equal(renamed.body.data.url, owners.url);
        const redelivered = await api(
          s,
          "POST",
          `/webhooks/${sub.id}/deliveries/${delivery.id}/redeliver`,
          { token: admin },
        );
        assertStatus(redelivered, 202, "an admin may redeliver, to the owner's url");
        await owners.waitFor(3);
        assertStatus(
          await api(s, "POST", `/webhooks/${sub.id}/recover`, { token: admin, body: { since } }),
          202,
        );
        assertStatus(await api(s, "POST", `/webhooks/${sub.id}/test`, { token: admin }), 202);
        await owners.waitFor(4);

        const moved = await api(s, "PATCH", `/webhooks/${sub.id}`, {
          token: owner.token,
          body: { url: owners.url, events: ["message.created", "reaction.added"] },
        });
        assertStatus(moved, 200, "the owner still changes its own subscription");
        await post(s, owner.token, secret, "after all that");
        await owners.waitFor(5);
        assert.equal(thief.hits.length, 0, "nothing ever reached the thief's receiver");
      },
      {},
      { engine: true },
    ).finally(() => Promise.all([owners.close(), thief.close()]));
  },
);

Deno.test("subscription access: admins list every subscription of their team, members their own", () =>
  withWorkspace(async (s, w) => {
    const mine = await subscribe(s, w.member.token, "http://127.0.0.1:9/a", { name: "member's" });
    const bots = await subscribe(s, w.bot.token, "http://127.0.0.1:9/b", { name: "bot's" });
    const admins = await subscribe(s, w.admin.token, "http://127.0.0.1:9/c", { name: "admin's" });
    const ids = async (token: string) =>
      (await api(s, "GET", "/webhooks", { token })).body.data.map((x: { id: string }) => x.id);
    assert.deepEqual(await ids(w.member.token), [mine.id]);
    assert.deepEqual(await ids(w.bot.token), [bots.id]);
    assert.deepEqual(await ids(w.admin.token), [admins.id, bots.id, mine.id]);
    const owner = await actor(s.ctx, w.team, "Olga Owner", "owner");
    assert.deepEqual(await ids(owner.token), [admins.id, bots.id, mine.id]);
    assertStatus(await api(s, "GET", `/webhooks/${mine.id}`, { token: owner.token }), 200);
  }));
