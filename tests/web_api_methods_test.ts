/**
 * Web API methods Slack's samples call besides posting (decisions.md, "More of the Web API"),
 * through Slack's own client, `@slack/web-api`, unmodified: the team, a bot's app, a direct
 * message opened (the same one again), the caller's channels, and a message's reactions.
 */
import assert from "node:assert/strict";
import { api, startServer, workspace } from "./harness.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { post } from "./webhook_receivers.ts";
import { SKIPPED_WITHOUT_SDKS, slackSdks } from "./slack_sdks.ts";

Deno.test({
  name:
    `web api: team.info, bots.info, conversations.open, users.conversations, reactions.get, pins${SKIPPED_WITHOUT_SDKS}`,
  ignore: !slackSdks,
  fn: async () => {
    const { WebClient } = await import("npm:@slack/web-api@8.2.0");
    const s = await startServer();
    try {
      const w = await workspace(s.ctx);
      const manifest = {
        display_information: { name: "Sampler" },
        oauth_config: {
          scopes: { bot: ["chat:write", "im:write", "users:read", "channels:read"] },
        },
      };
      const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest), null);
      const { install, token } = await installApp(s.ctx, {
        app: made.app,
        teamId: w.team.id,
        scopes: ["messages:write", "members:read", "channels:read", "messages:read"],
        channelId: null,
        approvedBy: null,
      });
      const web = new WebClient(token.value, { slackApiUrl: `${s.url}/api/slack/` });

      const team = await web.team.info();
      assert.equal(team.team?.id, w.team.id);
      const bot = await web.bots.info({ bot: install.bot_user_id });
      assert.equal(bot.bot?.app_id, made.app.id);
      await assert.rejects(web.bots.info({ bot: w.member.user.id }), /bot_not_found/);

      // A DM with a person: opened once, the same one after; the bot posts in it.
      const opened = await web.conversations.open({ users: w.member.user.id });
      const again = await web.conversations.open({ users: w.member.user.id });
      assert.equal(again.channel?.id, opened.channel?.id);
      await web.chat.postMessage({ channel: opened.channel!.id!, text: "Hello from the app" });
      const ims = await web.users.conversations({ types: "im" });
      assert.deepEqual(ims.channels?.map((c) => c.id), [opened.channel?.id]);
      await assert.rejects(
        web.conversations.open({ users: `${w.member.user.id},${w.admin.user.id}` }),
        /invalid_arguments/,
      );

      // A message's reactions, as the people who reacted see them.
      const general = w.team.general_channel_id;
      const message = await post(s, w.admin.token, general, "react to me");
      const people = new WebClient(w.admin.token, { slackApiUrl: `${s.url}/api/slack/` });
      await people.reactions.add({ channel: general, timestamp: message.ts, name: "tada" });
      const member = new WebClient(w.member.token, { slackApiUrl: `${s.url}/api/slack/` });
      await member.reactions.add({ channel: general, timestamp: message.ts, name: "tada" });
      const got = await people.reactions.get({ channel: general, timestamp: message.ts });
      // Who reacted, as Slack lists them (`users: []` with `count: 2` before).
      assert.deepEqual(
        (got.message as { reactions: { name: string; count: number; users: string[] }[] })
          .reactions.map((r) => [r.name, r.count, r.users.toSorted()]),
        [["tada", 2, [w.admin.user.id, w.member.user.id].toSorted()]],
      );

      // Pins: added once, listed, removed; a delete takes the pin with it.
      await people.pins.add({ channel: general, timestamp: message.ts });
      await assert.rejects(
        people.pins.add({ channel: general, timestamp: message.ts }),
        /already_pinned/,
      );
      const pinned = await people.pins.list({ channel: general });
      assert.deepEqual(
        (pinned.items as { message: { text: string } }[]).map((i) => i.message.text),
        ["react to me"],
      );
      await people.pins.remove({ channel: general, timestamp: message.ts });
      await assert.rejects(
        people.pins.remove({ channel: general, timestamp: message.ts }),
        /no_pin/,
      );
      await people.pins.add({ channel: general, timestamp: message.ts });
      await people.chat.delete({ channel: general, ts: message.ts });
      assert.deepEqual((await people.pins.list({ channel: general })).items, []);
    } finally {
      await s.close();
    }
  },
});

Deno.test({
  name:
    `web api: an app's bot with channels:join lists and joins public channels${SKIPPED_WITHOUT_SDKS}`,
  ignore: !slackSdks,
  fn: async () => {
    const { WebClient } = await import("npm:@slack/web-api@8.2.0");
    const s = await startServer();
    try {
      const w = await workspace(s.ctx);
      const made = await createAppFromManifest(
        s.ctx,
        JSON.stringify({
          display_information: { name: "Joiner" },
          oauth_config: { scopes: { bot: ["channels:join", "channels:read", "chat:write"] } },
        }),
        null,
      );
      const { token } = await installApp(s.ctx, {
        app: made.app,
        teamId: w.team.id,
        scopes: ["members:write", "channels:read", "messages:write"],
        channelId: null,
        approvedBy: null,
      });
      const web = new WebClient(token.value, { slackApiUrl: `${s.url}/api/slack/` });
      const made1 = await api(s, "POST", "/channels", {
        token: w.admin.token,
        body: { name: "deploys", visibility: "public" },
      });
      const hidden = await api(s, "POST", "/channels", {
        token: w.admin.token,
        body: { name: "secret", visibility: "private" },
      });
      const deploys = made1.body.data.id;

      const listed = await web.conversations.list();
      const seen = new Map(listed.channels?.map((c) => [c.name, c.is_member]));
      assert.equal(seen.get("deploys"), false, "a public channel it is not in, listed");
      assert.equal(seen.has("secret"), false, "a private one is not");
      await assert.rejects(
        web.chat.postMessage({ channel: deploys, text: "x" }),
        /channel_not_found|not_in_channel/,
      );

      const joined = await web.conversations.join({ channel: deploys });
      assert.equal(joined.channel?.id, deploys);
      const again = await web.conversations.join({ channel: deploys });
      assert.equal(again.warning, "already_in_channel");
      await web.chat.postMessage({ channel: deploys, text: "Joined and posting" });
      const after = await web.conversations.list({ types: "public_channel" });
      assert.equal(after.channels?.find((c) => c.id === deploys)?.is_member, true);
      await assert.rejects(
        web.conversations.join({ channel: hidden.body.data.id }),
        /channel_not_found/,
      );

      // A bot that is no app's keeps the seed's rule: it sees only its channels.
      const plain = new WebClient(w.bot.token, { slackApiUrl: `${s.url}/api/slack/` });
      await assert.rejects(
        plain.conversations.join({ channel: deploys }),
        /channel_not_found|missing_scope/,
      );
    } finally {
      await s.close();
    }
  },
});
