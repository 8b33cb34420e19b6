/**
 * Socket Mode's bounds (decisions.md, "Apps without a public URL"): at most 10 connections per
 * app (the 11th told `too_many_websockets`), a revoked token's connections told `link_disabled`,
 * and at most SOCKET_MODE_BACKLOG events kept for an app away (the oldest dropped, counted).
 */
import assert from "node:assert/strict";
import { api, withWorkspace } from "./harness.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { createAppToken, revokeAppToken } from "../domain/apps/socket/app_tokens.ts";
import { watchDeafApps } from "../domain/apps/socket/deaf_watch.ts";
import { socketStatus } from "../domain/apps/socket/status.ts";
import { rawSocket } from "./socket_client.ts";

const MANIFEST = JSON.stringify({
  display_information: { name: "Bounded" },
  oauth_config: { scopes: { bot: ["channels:history"] } },
  settings: {
    event_subscriptions: { bot_events: ["message.channels"] },
    socket_mode_enabled: true,
  },
});

Deno.test("socket mode: the 11th connection is refused, and a revoked token's are told link_disabled", async () => {
  await withWorkspace(async (s) => {
    const { app } = await createAppFromManifest(s.ctx, MANIFEST, null);
    const token = await createAppToken(s.ctx, { appId: app.id, name: null, actor: null });
    const conns: Awaited<ReturnType<typeof rawSocket>>[] = [];
    for (let i = 0; i < 10; i++) conns.push(await rawSocket(s.url, token.token));
    assert.ok(conns.every((c) => c.got[0].type === "hello"));
    const eleventh = await rawSocket(s.url, token.token);
    assert.deepEqual(
      { type: eleventh.got[0].type, reason: eleventh.got[0].reason },
      { type: "disconnect", reason: "too_many_websockets" },
    );
    await eleventh.closed;

    await revokeAppToken(s.ctx, { appId: app.id, tokenId: token.id, actor: null });
    await waitUntil(
      () => conns.every((c) => c.got.some((m) => m.reason === "link_disabled")),
      15_000,
      "link_disabled on every connection",
    );
    await Promise.all(conns.map((c) => c.closed));
  });
});

Deno.test("socket mode: an app away keeps its newest SOCKET_MODE_BACKLOG events; the rest are counted dropped", async () => {
  await withWorkspace(async (s, w) => {
    const general = w.team.general_channel_id;
    const { app } = await createAppFromManifest(s.ctx, MANIFEST, null);
    const { install } = await installApp(s.ctx, {
      app,
      teamId: w.team.id,
      scopes: app.scopes,
      channelId: null,
      approvedBy: null,
    });
    await api(s, "POST", `/channels/${general}/members`, {
      token: w.admin.token,
      body: { user_id: install.bot_user_id },
    });
    for (let i = 0; i < 8; i++) {
      await api(s, "POST", `/channels/${general}/messages`, {
        token: w.member.token,
        body: { body: `kept? ${i}` },
      });
    }
    // Nine in all with the bot's joining; five kept.
    await watchDeafApps(s.ctx);
    const status = await socketStatus(s.ctx, app.id);
    assert.deepEqual({ backlog: status.backlog, dropped: status.dropped }, {
      backlog: 5,
      dropped: 4,
    });

    const { token } = await createAppToken(s.ctx, { appId: app.id, name: null, actor: null });
    const conn = await rawSocket(s.url, token);
    const texts = () =>
      conn.got.flatMap((m) => m.payload?.event?.text ? [m.payload.event.text] : []);
    await waitUntil(() => texts().length >= 5, 5_000, "the five kept");
    assert.deepEqual(texts(), ["kept? 3", "kept? 4", "kept? 5", "kept? 6", "kept? 7"]);
    await conn.close();
  }, { SOCKET_MODE_BACKLOG: "5" });
});
