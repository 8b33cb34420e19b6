/**
 * The Web API's channel changes (conversations.create, archive, unarchive, rename, setTopic,
 * setPurpose, invite, kick, leave), users.profile.get and emoji.list: each with Slack's
 * arguments and codes, the same rules as the REST API (whose answers show the change), and,
 * through Slack's own `@slack/web-api`, as an app with Slack's scopes calls them.
 */
import assert from "node:assert/strict";
import { actor, api, slackApi, type TestServer, withWorkspace, workspace } from "./harness.ts";
import { createCustomEmoji } from "../domain/people/workspace.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { SKIPPED_WITHOUT_SDKS, slackSdks } from "./slack_sdks.ts";

/** A Web API call's answer; `ok: false` gives its error code instead. */
async function call(s: TestServer, token: string, method: string, args: object = {}) {
  const body = await slackApi(s, token, { method, args });
  return body.ok ? body : body.error as string;
}

Deno.test("web api: conversations.create names a channel as Slack does, and refuses its names in Slack's codes", async () => {
  await withWorkspace(async (s, w) => {
    const made = await call(s, w.admin.token, "conversations.create", { name: "Launch Plans" });
    assert.equal(made.channel.name, "launch-plans");
    assert.equal(made.channel.is_member, true);
    assert.equal(made.channel.is_private, false);
    const rest = await api(s, "GET", `/channels/${made.channel.id}`, {
      token: w.admin.token,
    });
    assert.equal(rest.body.data.name, "Launch Plans");
    const secret = await call(s, w.admin.token, "conversations.create", {
      name: "quiet",
      is_private: "true",
    });
    assert.equal(secret.channel.is_private, true);
    for (
      const [name, code] of [
        ["launch plans", "name_taken"],
        ["", "invalid_name_required"],
        ["  ", "invalid_name_required"],
        ["!!!", "invalid_name_specials"],
        ["x".repeat(256), "invalid_name_maxlength"],
        ["a\u200bb", "invalid_name"],
      ]
    ) {
      assert.equal(await call(s, w.admin.token, "conversations.create", { name }), code, name);
    }
  });
});

Deno.test("web api: setTopic, setPurpose and rename change the channel both APIs read; #name follows the rename", async () => {
  await withWorkspace(async (s, w) => {
    const { channel } = await call(s, w.admin.token, "conversations.create", { name: "launch" });
    const topic = await call(s, w.admin.token, "conversations.setTopic", {
      channel: channel.id,
      topic: "Ship it",
    });
    assert.equal(topic.channel.topic.value, "Ship it");
    const rest = (token: string) => api(s, "GET", `/channels/${channel.id}`, { token });
    assert.equal((await rest(w.admin.token)).body.data.topic, "Ship it");
    await call(s, w.admin.token, "conversations.setPurpose", {
      channel: channel.id,
      purpose: "Where launches are planned",
    });
    const info = await call(s, w.admin.token, "conversations.info", { channel: channel.id });
    assert.equal(info.channel.purpose.value, "Where launches are planned");
    assert.equal(info.channel.topic.value, "Ship it");
    // An empty topic clears it.
    await call(s, w.admin.token, "conversations.setTopic", { channel: channel.id, topic: "" });
    assert.equal((await rest(w.admin.token)).body.data.topic, null);
    // Only members describe it; the rule for names holds.
    assert.equal(
      await call(s, w.member.token, "conversations.setTopic", { channel: channel.id, topic: "x" }),
      "not_in_channel",
    );
    assert.equal(
      await call(s, w.admin.token, "conversations.setTopic", {
        channel: channel.id,
        topic: "t".repeat(256),
      }),
      "too_long",
    );

    const renamed = await call(s, w.admin.token, "conversations.rename", {
      channel: channel.id,
      name: "Launch Day",
    });
    assert.equal(renamed.channel.name, "launch-day");
    assert.equal((await rest(w.admin.token)).body.data.slug, "launch-day");
    const byName = await call(s, w.admin.token, "conversations.info", { channel: "#launch-day" });
    assert.equal(byName.channel.id, channel.id);
    assert.equal(
      await call(s, w.admin.token, "conversations.info", { channel: "#launch" }),
      "channel_not_found",
    );
    // The old name is free again; the general channel's is not.
    await call(s, w.admin.token, "conversations.create", { name: "launch" });
    assert.equal(
      await call(s, w.admin.token, "conversations.rename", {
        channel: channel.id,
        name: "general",
      }),
      "name_taken",
    );
    // A member who didn't make it may not rename it, in it or not.
    await call(s, w.admin.token, "conversations.invite", {
      channel: channel.id,
      users: w.member.user.id,
    });
    assert.equal(
      await call(s, w.member.token, "conversations.rename", { channel: channel.id, name: "mine" }),
      "not_authorized",
    );
  });
});

Deno.test("web api: two renames to one name at once: one wins, the other is name_taken", async () => {
  await withWorkspace(async (s, w) => {
    const a = await call(s, w.admin.token, "conversations.create", { name: "alpha" });
    const b = await call(s, w.admin.token, "conversations.create", { name: "beta" });
    const answers = await Promise.all(
      [a, b].map((c) =>
        call(s, w.admin.token, "conversations.rename", { channel: c.channel.id, name: "gamma" })
      ),
    );
    assert.deepEqual(answers.map((x) => typeof x === "string" ? x : "ok").sort(), [
      "name_taken",
      "ok",
    ]);
    const listed = await api(s, "GET", "/channels", { token: w.admin.token });
    const slugs = listed.body.data.map((c: { slug: string }) => c.slug).sort();
    assert.equal(slugs.filter((slug: string) => slug === "gamma").length, 1);
  });
});

Deno.test("web api: invite, kick and leave change who is in a channel, with Slack's codes for each refusal", async () => {
  await withWorkspace(async (s, w) => {
    const { channel } = await call(s, w.admin.token, "conversations.create", { name: "crew" });
    const id = channel.id;
    const members = async () =>
      (await call(s, w.admin.token, "conversations.members", { channel: id })).members.sort();
    const invited = await call(s, w.admin.token, "conversations.invite", {
      channel: id,
      users: `${w.member.user.id}, ${w.bot.user.id}`,
    });
    assert.equal(invited.channel.id, id);
    assert.deepEqual(await members(), [w.admin.user.id, w.member.user.id, w.bot.user.id].sort());
    // Already in: passed over, unless everyone was.
    assert.equal(
      await call(s, w.admin.token, "conversations.invite", { channel: id, users: w.bot.user.id }),
      "already_in_channel",
    );
    // A token without the scope is told the one Slack's developers ask for.
    const poster = await actor(s.ctx, w.team, "Poster", "bot", ["messages:write"]);
    const refused = await slackApi(s, poster.token, {
      method: "conversations.invite",
      args: { channel: id, users: w.member.user.id },
    });
    assert.equal(refused.error, "missing_scope");
    assert.equal(refused.needed, "channels:write.invites");
    for (
      const [users, code] of [
        [w.admin.user.id, "cant_invite_self"],
        [crypto.randomUUID(), "user_not_found"],
        ["", "no_user"],
      ]
    ) {
      assert.equal(
        await call(s, w.admin.token, "conversations.invite", { channel: id, users }),
        code,
      );
    }

    // Kicking: the creator or an admin; someone in it; never oneself.
    assert.equal(
      await call(s, w.member.token, "conversations.kick", { channel: id, user: w.bot.user.id }),
      "restricted_action",
    );
    assert.deepEqual(
      await call(s, w.admin.token, "conversations.kick", { channel: id, user: w.bot.user.id }),
      { ok: true },
    );
    assert.equal(
      await call(s, w.admin.token, "conversations.kick", { channel: id, user: w.bot.user.id }),
      "not_in_channel",
    );
    assert.equal(
      await call(s, w.admin.token, "conversations.kick", { channel: id, user: w.admin.user.id }),
      "cant_kick_self",
    );
    const general = w.team.general_channel_id;
    assert.equal(
      await call(s, w.admin.token, "conversations.kick", {
        channel: general,
        user: w.member.user.id,
      }),
      "cant_kick_from_general",
    );

    // Leaving: once, then ok with not_in_channel; never the general channel.
    assert.deepEqual(await call(s, w.member.token, "conversations.leave", { channel: id }), {
      ok: true,
    });
    assert.deepEqual(await call(s, w.member.token, "conversations.leave", { channel: id }), {
      ok: true,
      not_in_channel: true,
    });
    assert.equal(
      await call(s, w.member.token, "conversations.leave", { channel: general }),
      "cant_leave_general",
    );
    assert.deepEqual(await members(), [w.admin.user.id]);
    // Each change left its notice, as the REST API's do.
    const history = await call(s, w.admin.token, "conversations.history", { channel: id });
    assert.deepEqual(
      history.messages.map((m: { subtype?: string }) => m.subtype).filter(Boolean),
      ["channel_leave", "channel_leave", "channel_join", "channel_join"],
    );
  });
});

Deno.test("web api: archive and unarchive, by the REST API's rule, with Slack's codes", async () => {
  await withWorkspace(async (s, w) => {
    const { channel } = await call(s, w.admin.token, "conversations.create", { name: "old" });
    const id = channel.id;
    await call(s, w.admin.token, "conversations.invite", { channel: id, users: w.member.user.id });
    assert.equal(
      await call(s, w.member.token, "conversations.archive", { channel: id }),
      "restricted_action",
    );
    assert.deepEqual(await call(s, w.admin.token, "conversations.archive", { channel: id }), {
      ok: true,
    });
    assert.equal(
      await call(s, w.admin.token, "conversations.archive", { channel: id }),
      "already_archived",
    );
    const rest = await api(s, "GET", `/channels/${id}`, { token: w.admin.token });
    assert.equal(rest.body.data.is_archived, true);
    for (
      const [method, args] of [
        ["conversations.setTopic", { topic: "x" }],
        ["conversations.rename", { name: "older" }],
        ["conversations.invite", { users: w.bot.user.id }],
        ["conversations.leave", {}],
      ] as const
    ) {
      assert.equal(await call(s, w.member.token, method, { channel: id, ...args }), "is_archived");
    }
    await call(s, w.admin.token, "conversations.unarchive", { channel: id });
    assert.equal(
      await call(s, w.admin.token, "conversations.unarchive", { channel: id }),
      "not_archived",
    );
    assert.equal(
      await call(s, w.admin.token, "conversations.archive", {
        channel: w.team.general_channel_id,
      }),
      "cant_archive_general",
    );
    const dm = await call(s, w.admin.token, "conversations.open", { users: w.member.user.id });
    assert.equal(
      await call(s, w.admin.token, "conversations.archive", { channel: dm.channel.id }),
      "method_not_supported_for_channel_type",
    );
  });
});

Deno.test("web api: users.profile.get reads a profile of the team; emoji.list the team's custom emoji", async () => {
  await withWorkspace(async (s, w) => {
    const mine = await call(s, w.member.token, "users.profile.get");
    assert.equal(mine.profile.real_name, w.member.user.name);
    const theirs = await call(s, w.member.token, "users.profile.get", { user: w.admin.user.id });
    assert.equal(theirs.profile.display_name, w.admin.user.name);
    assert.equal(
      await call(s, w.member.token, "users.profile.get", { user: crypto.randomUUID() }),
      "user_not_found",
    );
    const other = await workspace(s.ctx, "Other");
    assert.equal(
      await call(s, other.admin.token, "users.profile.get", { user: w.admin.user.id }),
      "user_not_found",
    );

    assert.deepEqual((await call(s, w.bot.token, "emoji.list")).emoji, {});
    await createCustomEmoji(s.ctx, w.team.id, "partyparrot");
    await createCustomEmoji(s.ctx, w.team.id, "constructor");
    await createCustomEmoji(s.ctx, other.team.id, "elsewhere");
    const listed = await call(s, w.bot.token, "emoji.list");
    assert.deepEqual(listed.emoji, { constructor: "", partyparrot: "" });
  });
});

Deno.test(
  `web api: an app asking Slack's scopes for these methods gets them, through @slack/web-api${SKIPPED_WITHOUT_SDKS}`,
  {
    ignore: !slackSdks,
  },
  async () => {
    const { WebClient } = await import("npm:@slack/web-api@8.2.0");
    await withWorkspace(async (s, w) => {
      const manifest = {
        display_information: { name: "Organizer" },
        oauth_config: {
          scopes: {
            bot: ["channels:manage", "channels:write.invites", "users.profile:read", "emoji:read"],
          },
        },
      };
      const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest), null);
      assert.deepEqual(made.warnings, []);
      assert.deepEqual(made.app.scopes, ["channels:write", "members:read", "members:write"]);
      const { token } = await installApp(s.ctx, {
        app: made.app,
        teamId: w.team.id,
        scopes: made.app.scopes,
        channelId: null,
        approvedBy: null,
      });
      const web = new WebClient(token.value, { slackApiUrl: `${s.url}/api/slack/` });
      const { channel } = await web.conversations.create({ name: "standup" });
      const id = channel!.id!;
      await web.conversations.invite({ channel: id, users: w.member.user.id });
      await web.conversations.setTopic({ channel: id, topic: "Daily, 9:30" });
      await web.conversations.setPurpose({ channel: id, purpose: "Who does what today" });
      const renamed = await web.conversations.rename({ channel: id, name: "daily-standup" });
      assert.equal(renamed.channel?.name, "daily-standup");
      assert.equal(renamed.channel?.topic?.value, "Daily, 9:30");
      await web.conversations.kick({ channel: id, user: w.member.user.id });
      const profile = await web.users.profile.get({ user: w.member.user.id });
      assert.equal(profile.profile?.real_name, w.member.user.name);
      assert.deepEqual((await web.emoji.list()).emoji, {});
      await web.conversations.archive({ channel: id });
      await web.conversations.unarchive({ channel: id });
      await web.conversations.leave({ channel: id });
    });
  },
);
