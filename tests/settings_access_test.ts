/**
 * Who may do what through the settings screen, at the domain functions it shares with the API
 * and the CLI: a person acts on its own team only, a member on its own tokens only, and what it
 * may not manage is not found. The operator (actor null) may act anywhere.
 */
import assert from "node:assert/strict";
import { createIncoming, revokeIncomingById } from "../domain/webhooks/incoming.ts";
import {
  createToken,
  listTokens,
  revokeTokenById,
  rotateTokenById,
} from "../domain/people/tokens.ts";
import { enableWebhook, rotateWebhookSecret } from "../domain/webhooks/admin.ts";
import { api, withWorkspace, workspace } from "./harness.ts";
import { subscribe } from "./webhook_receivers.ts";
import { subjectOfPerson } from "../domain/principals.ts";

const notFound = (e: { status?: number }) => e.status === 404;

Deno.test("settings access: a person never reaches another team's tokens, hooks or subscriptions", () =>
  withWorkspace(async (s, a) => {
    const b = await workspace(s.ctx, "Other");
    const general = a.team.general_channel_id;
    await api(s, "POST", `/channels/${general}/members`, {
      token: a.admin.token,
      body: { user_id: a.bot.user.id },
    });
    const sub = await subscribe(s, a.admin.token, "http://127.0.0.1:9/hook");
    const { hook } = await createIncoming(
      s.ctx,
      { channelId: general, botId: a.bot.user.id },
      null,
    );
    const [botToken] = await listTokens(s.ctx, a.bot.user.id);

    const outsider = b.admin.user;
    await assert.rejects(revokeTokenById(s.ctx, botToken.id, subjectOfPerson(outsider)), notFound);
    await assert.rejects(rotateTokenById(s.ctx, botToken.id, subjectOfPerson(outsider)), notFound);
    await assert.rejects(
      createToken(s.ctx, a.bot.user, {
        scopes: ["channels:read"],
        actor: subjectOfPerson(outsider),
      }),
      notFound,
    );
    await assert.rejects(rotateWebhookSecret(s.ctx, sub.id, subjectOfPerson(outsider)), notFound);
    await assert.rejects(enableWebhook(s.ctx, sub.id, subjectOfPerson(outsider)), notFound);
    await assert.rejects(
      createIncoming(
        s.ctx,
        { channelId: general, botId: b.bot.user.id },
        subjectOfPerson(outsider),
      ),
      notFound,
    );
    await assert.rejects(revokeIncomingById(s.ctx, hook.id, subjectOfPerson(outsider)), notFound);
    assert.equal((await api(s, "GET", "/channels", { token: a.bot.token })).status, 200);
  }));

Deno.test("settings access: a member manages its own tokens only; an admin also its bots'", () =>
  withWorkspace(async (s, w) => {
    const [memberToken] = await listTokens(s.ctx, w.member.user.id);
    const [botToken] = await listTokens(s.ctx, w.bot.user.id);
    const sub = await subscribe(s, w.admin.token, "http://127.0.0.1:9/hook");

    await assert.rejects(
      revokeTokenById(s.ctx, botToken.id, subjectOfPerson(w.member.user)),
      notFound,
    );
    await assert.rejects(
      createToken(s.ctx, w.bot.user, {
        scopes: ["channels:read"],
        actor: subjectOfPerson(w.member.user),
      }),
      notFound,
    );
    await assert.rejects(
      rotateWebhookSecret(s.ctx, sub.id, subjectOfPerson(w.member.user)),
      notFound,
    );
    await assert.rejects(
      revokeTokenById(s.ctx, memberToken.id, subjectOfPerson(w.admin.user)),
      notFound,
    );

    const made = await createToken(s.ctx, w.bot.user, {
      scopes: ["channels:read"],
      actor: subjectOfPerson(w.admin.user),
    });
    assert.equal(made.token.user_id, w.bot.user.id);
    await rotateTokenById(s.ctx, botToken.id, subjectOfPerson(w.admin.user));
    await revokeTokenById(s.ctx, memberToken.id, subjectOfPerson(w.member.user));
    await revokeTokenById(s.ctx, made.token.id, null);
  }));
