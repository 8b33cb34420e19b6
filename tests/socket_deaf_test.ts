/**
 * Someone is told (decisions.md, "Apps without a public URL"): a Socket Mode app with events
 * waiting and no connection for SOCKET_MODE_DEAF_AFTER gets its installer a direct message from
 * the Integrations bot, once per episode, and another when it connects again. The look is run at
 * chosen times here (`watchDeafApps(ctx, now)`), as each instance's timer runs it.
 */
import assert from "node:assert/strict";
import { api, signedInCookie, toldTo, withWorkspace } from "./harness.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { createAppToken } from "../domain/apps/socket/app_tokens.ts";
import { watchDeafApps } from "../domain/apps/socket/deaf_watch.ts";
import { rawSocket } from "./socket_client.ts";

const MANIFEST = JSON.stringify({
  display_information: { name: "Listener" },
  features: { bot_user: { display_name: "listener" } },
  oauth_config: { scopes: { bot: ["channels:history"] } },
  settings: {
    event_subscriptions: { bot_events: ["message.channels"] },
    socket_mode_enabled: true,
  },
});

Deno.test("socket mode: an app away with events waiting gets its installer told once, and again when it is back", async () => {
  await withWorkspace(async (s, w) => {
    const general = w.team.general_channel_id;
    const { app } = await createAppFromManifest(s.ctx, MANIFEST, null);
    const installed = await installApp(s.ctx, {
      app,
      teamId: w.team.id,
      scopes: app.scopes,
      channelId: null,
      approvedBy: w.admin.user.id,
    });
    await api(s, "POST", `/channels/${general}/members`, {
      token: w.admin.token,
      body: { user_id: installed.install.bot_user_id },
    });
    const after = s.ctx.settings.socketMode.deafAfterMs;
    const t0 = Date.now();

    for (let i = 0; i < 3; i++) {
      await api(s, "POST", `/channels/${general}/messages`, {
        token: w.member.token,
        body: { body: `while away ${i}` },
      });
    }
    await watchDeafApps(s.ctx, t0);
    await watchDeafApps(s.ctx, t0 + after - 1);
    assert.deepEqual(await toldTo(s, w.admin.token), [], "not before SOCKET_MODE_DEAF_AFTER");

    // Two instances looking at the same moment: one tells; a later look tells nothing more.
    await Promise.all([watchDeafApps(s.ctx, t0 + after), watchDeafApps(s.ctx, t0 + after)]);
    await watchDeafApps(s.ctx, t0 + after + 1);
    const told = await toldTo(s, w.admin.token);
    assert.equal(told.length, 1, JSON.stringify(told));
    // The bot's joining the channel, and the three posts.
    assert.match(
      told[0],
      /^Your app "Listener" has had no Socket Mode connection for 5 min and 4 events are waiting/,
    );
    assert.match(told[0], new RegExp(`app:deliveries --app ${app.id}`));
    assert.deepEqual(await toldTo(s, w.member.token), [], "the installer alone");
    // The team's Apps page says so too.
    const cookie = await signedInCookie(s.url, s.ctx, w.admin.user.id);
    const appsPage = () =>
      fetch(`${s.url}/settings/integrations/apps`, { headers: { Cookie: cookie } }).then((r) =>
        r.text()
      );
    assert.match(await appsPage(), /Not connected; 4 events wait for it/);

    // Back: told once more, and the four events arrive.
    const { token } = await createAppToken(s.ctx, { appId: app.id, name: null, actor: null });
    const { got, close } = await rawSocket(s.url, token);
    try {
      await waitUntil(
        () => got.filter((m) => m.type === "events_api").length >= 4,
        5_000,
        "events",
      );
      await Promise.all([watchDeafApps(s.ctx), watchDeafApps(s.ctx)]);
      await watchDeafApps(s.ctx);
      const now = await toldTo(s, w.admin.token);
      assert.equal(now.length, 2, JSON.stringify(now));
      assert.match(now[1], /^Your app "Listener" is connected again/);
      // Once the last ack is in.
      await waitUntil(
        async () => /Connected \(1 connection\); nothing waits for it\./.test(await appsPage()),
        5_000,
        "the Apps page showing the app connected",
      );
    } finally {
      await close();
    }
  });
});
