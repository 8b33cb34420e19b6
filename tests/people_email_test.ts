/**
 * People's optional email (decisions.md, "More of the Web API"): unique in a team, set at
 * creation or by PATCH /users/{user} (an admin; the person can't, or the 422 of a taken address
 * would tell them whose it is), found by users.lookupByEmail and shown only to tokens with
 * `users:read.email`.
 */
import assert from "node:assert/strict";
import {
  actor,
  api,
  assertInvalid,
  assertStatus,
  slackApi,
  startServer,
  workspace,
} from "./harness.ts";
import { createUser } from "../domain/people/workspace.ts";
import { listAudit } from "../kv/audit.ts";

const slack = (s: { url: string }, token: string, method: string, args: object) =>
  slackApi(s, token, { method, args });

Deno.test("email: set by an admin, unique in the team, refused when malformed; no member learns whose", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const eve = await createUser(s.ctx, {
      teamId: w.team.id,
      name: "Eve",
      type: "human",
      role: "member",
      email: "  Eve@Example.COM ",
    }, null);
    assert.equal(eve.email, "eve@example.com");
    await assert.rejects(
      createUser(s.ctx, {
        teamId: w.team.id,
        name: "Eve again",
        type: "human",
        role: "member",
        email: "eve@example.com",
      }, null),
      /has this email/,
    );

    const path = `/users/${w.member.user.id}`;
    // A member sets no address, its own included: a free one and Eve's answer alike.
    for (const email of ["mo@example.com", "eve@example.com"]) {
      const own = await api(s, "PATCH", path, { token: w.member.token, body: { email } });
      assertStatus(own, 403, `the person's own: ${email}`);
      assert.equal(
        own.body.message,
        "Only the team's admins set email addresses: ask one of them.",
      );
    }
    const set = await api(s, "PATCH", path, {
      token: w.admin.token,
      body: { email: "Mo@Example.com" },
    });
    assertStatus(set, 200, "an admin sets it");
    assert.equal(set.body.data.email, "mo@example.com");
    assertStatus(
      await api(s, "PATCH", path, { token: w.bot.token, body: { email: "x@example.com" } }),
      403,
      "a bot",
    );
    assertInvalid(
      await api(s, "PATCH", `/users/${w.admin.user.id}`, {
        token: w.admin.token,
        body: { email: "mo@example.com" },
      }),
      "email",
      "taken",
    );
    assertInvalid(
      await api(s, "PATCH", path, { token: w.admin.token, body: { email: "not an address" } }),
      "email",
      "malformed",
    );
    const cleared = await api(s, "PATCH", path, { token: w.admin.token, body: { email: null } });
    assertStatus(cleared, 200, "an admin clears it");
    assert.equal(cleared.body.data.email, null);
    // Freed: the admin may take it now.
    assertStatus(
      await api(s, "PATCH", `/users/${w.admin.user.id}`, {
        token: w.admin.token,
        body: { email: "mo@example.com" },
      }),
      200,
      "a freed address",
    );
    const audit = await listAudit(s.ctx.kv, w.team.id, 10);
    const changes = audit.filter((e) => e.action === "user.email_changed");
    assert.equal(changes.length, 3);
    assert.ok(!JSON.stringify(changes).includes("@"), "no address in the audit log");
  } finally {
    await s.close();
  }
});

Deno.test("email: users.lookupByEmail finds a person; users.info shows it to users:read.email only", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    await api(s, "PATCH", `/users/${w.member.user.id}`, {
      token: w.admin.token,
      body: { email: "mo@example.com" },
    });
    const reader = await actor(s.ctx, w.team, "Reader", "bot", ["members:read"]);

    const found = await slack(s, w.bot.token, "users.lookupByEmail", { email: "MO@example.com" });
    assert.equal(found.ok, true, JSON.stringify(found));
    assert.equal(found.user.id, w.member.user.id);
    assert.equal(found.user.profile.email, "mo@example.com");
    const none = await slack(s, w.bot.token, "users.lookupByEmail", { email: "no@example.com" });
    assert.deepEqual([none.ok, none.error], [false, "users_not_found"]);
    const unscoped = await slack(s, reader.token, "users.lookupByEmail", {
      email: "mo@example.com",
    });
    assert.deepEqual([unscoped.error, unscoped.needed], ["missing_scope", "users:read.email"]);

    const shown = await slack(s, w.bot.token, "users.info", { user: w.member.user.id });
    assert.equal(shown.user.profile.email, "mo@example.com");
    const hidden = await slack(s, reader.token, "users.info", { user: w.member.user.id });
    assert.equal(hidden.ok, true);
    assert.equal(hidden.user.profile.email, undefined);
    const listed = await slack(s, reader.token, "users.list", {});
    assert.ok(!JSON.stringify(listed).includes("mo@example.com"));
  } finally {
    await s.close();
  }
});
