/**
 * The team's own records (its people, its audit log, its bots) are the policy's to hand out
 * ("team.administer"), in the domain functions the settings screen and the CLI share: a page's
 * guard is not what keeps a member out.
 */
import assert from "node:assert/strict";
import { ApiError } from "../core/errors.ts";
import { readAuditLog } from "../domain/audit_log.ts";
import { tokenHolder } from "../domain/people/tokens.ts";
import { createTeam, createUser, listUsers } from "../domain/people/workspace.ts";
import { withWorkspace } from "./harness.ts";
import { subjectOfPerson } from "../domain/principals.ts";

const hidden = (e: unknown) => e instanceof ApiError && e.status === 404;

Deno.test("team administration: members are refused in the domain, admins and the operator are not", () =>
  withWorkspace(async (s, w) => {
    const { ctx } = s;
    const teamId = w.team.id;
    const member = w.member.user;
    await assert.rejects(() => listUsers(ctx, teamId, subjectOfPerson(member)), hidden);
    await assert.rejects(
      () => readAuditLog(ctx, teamId, { limit: 5, actor: subjectOfPerson(member) }),
      hidden,
    );
    await assert.rejects(
      () => createUser(ctx, { teamId, name: "Sneaky Bot", type: "bot" }, subjectOfPerson(member)),
      hidden,
    );
    await assert.rejects(
      () => tokenHolder(ctx, w.bot.user.id, subjectOfPerson(member), "No such bot."),
      hidden,
    );
    // Its three, and the team's Integrations bot.
    assert.equal((await listUsers(ctx, teamId, null)).length, 4, "nobody was added");

    const admin = w.admin.user;
    assert.equal((await listUsers(ctx, teamId, subjectOfPerson(admin))).length, 4);
    await readAuditLog(ctx, teamId, { limit: 5, actor: subjectOfPerson(admin) });
    const bot = await createUser(
      ctx,
      { teamId, name: "Helper", type: "bot" },
      subjectOfPerson(admin),
    );
    assert.equal(
      (await tokenHolder(ctx, bot.id, subjectOfPerson(admin), "No such bot.")).id,
      bot.id,
    );
  }));

Deno.test("team administration: another team's admin is refused as a stranger", () =>
  withWorkspace(async (s, w) => {
    const other = await createUser(
      s.ctx,
      { teamId: w.team.id, name: "Temp", type: "human", role: "member" },
      null,
    );
    const { ctx } = s;
    const elsewhere = await createTeam(ctx, "Elsewhere");
    const theirAdmin = await createUser(
      ctx,
      { teamId: elsewhere.id, name: "Their Admin", type: "human", role: "admin" },
      null,
    );
    await assert.rejects(() => listUsers(ctx, w.team.id, subjectOfPerson(theirAdmin)), hidden);
    await assert.rejects(
      () => tokenHolder(ctx, other.id, subjectOfPerson(theirAdmin), "No such user."),
      hidden,
    );
  }));
