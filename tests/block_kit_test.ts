/**
 * More of Block Kit (decisions.md, "More of Block Kit", "Presses inside views"), with an
 * unmodified Slack Bolt app (`npm:@slack/bolt@5.1.0`): messages take Slack's elements and
 * `rich_text`; a modal with a date, a person, a conversation, a number and checkboxes is pressed
 * inside (the app pushes a second view from the button's trigger) and submitted, and the app
 * reads Slack's state values; what a view does not offer is 422, naming the input.
 */
import assert from "node:assert/strict";
import {
  actor,
  api,
  assertInvalid,
  assertStatus,
  startServer,
  type TestServer,
  workspace,
} from "./harness.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { addMemberAsOperator } from "../domain/channels/members.ts";
import { getUser } from "../kv/workspace.ts";
import { freePort } from "./processes.ts";
import { connect } from "./sse_client.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { slackSdks } from "./slack_sdks.ts";

const plain = (text: string) => ({ type: "plain_text", text });
const option = (value: string) => ({ text: plain(value.toUpperCase()), value });

const SURVEY = {
  type: "modal",
  callback_id: "survey",
  external_id: "survey-1",
  title: plain("Survey"),
  submit: plain("Send"),
  blocks: [
    {
      type: "input",
      block_id: "when",
      label: plain("When"),
      element: { type: "datepicker", action_id: "date", initial_date: "2026-12-01" },
    },
    {
      type: "input",
      block_id: "who",
      label: plain("Who"),
      element: { type: "users_select", action_id: "user" },
    },
    {
      type: "input",
      block_id: "where",
      optional: true,
      label: plain("Where"),
      element: { type: "conversations_select", action_id: "conv" },
    },
    {
      type: "input",
      block_id: "count",
      label: plain("How many"),
      element: {
        type: "number_input",
        action_id: "n",
        is_decimal_allowed: false,
        min_value: "1",
        max_value: "10",
      },
    },
    {
      type: "input",
      block_id: "repo",
      optional: true,
      label: plain("Repository"),
      element: { type: "external_select", action_id: "ext", min_query_length: 2 },
    },
    {
      type: "input",
      block_id: "picks",
      optional: true,
      label: plain("Picks"),
      element: { type: "checkboxes", action_id: "boxes", options: [option("a"), option("b")] },
    },
    {
      type: "actions",
      block_id: "acts",
      elements: [
        { type: "button", action_id: "more", text: plain("More"), value: "more" },
        {
          type: "radio_buttons",
          action_id: "mood",
          options: [option("glad"), option("sad")],
        },
      ],
    },
  ],
};

const SECOND = {
  type: "modal",
  callback_id: "second",
  title: plain("More"),
  blocks: [{ type: "section", text: { type: "mrkdwn", text: "Pushed from a button" } }],
};

/** The app, as a Slack developer writes it: a command opens the survey; a button pushes. */
async function surveyApp(
  s: TestServer,
  { token, signingSecret, port }: { token: string; signingSecret: string; port: number },
) {
  const { default: bolt } = await import("npm:@slack/bolt@5.1.0");
  // deno-lint-ignore no-explicit-any
  const heard = { presses: [] as any[], submitted: [] as any[] };
  const app = new bolt.App({
    token,
    signingSecret,
    clientOptions: { slackApiUrl: `${s.url}/api/slack/` },
    logLevel: bolt.LogLevel.ERROR,
  });
  app.command("/survey", async ({ ack, client, body }) => {
    await ack();
    await client.views.open({ trigger_id: body.trigger_id, view: SURVEY as never });
  });
  app.action("more", async ({ ack, client, body }) => {
    await ack();
    heard.presses.push(body);
    await client.views.push({
      trigger_id: (body as { trigger_id: string }).trigger_id,
      view: SECOND as never,
    });
  });
  app.action("mood", async ({ ack, body }) => {
    await ack();
    heard.presses.push(body);
  });
  app.options("ext", async ({ ack, options }) => {
    const typed = (options as { value: string }).value;
    await ack({
      options: ["api", "app", "web"].filter((r) => r.startsWith(typed)).map((r) => ({
        text: { type: "plain_text" as const, text: r },
        value: r,
      })),
    });
  });
  app.view("second", async ({ ack }) => await ack());
  app.view("survey", async ({ ack, view }) => {
    heard.submitted.push(view.state.values);
    await ack();
  });
  await app.start(port);
  return { heard, stop: () => app.stop() };
}

async function installed(s: TestServer, url: string) {
  const w = await workspace(s.ctx);
  const manifest = {
    display_information: { name: "Surveyor" },
    features: { slash_commands: [{ command: "/survey", url, description: "Asks" }] },
    oauth_config: { scopes: { bot: ["commands", "chat:write"] } },
    settings: { interactivity: { is_enabled: true, request_url: url } },
  };
  const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest), null);
  const { install, token } = await installApp(s.ctx, {
    app: made.app,
    teamId: w.team.id,
    scopes: ["commands", "messages:write"],
    channelId: null,
    approvedBy: null,
  });
  const general = w.team.general_channel_id;
  await addMemberAsOperator(s.ctx, general, (await getUser(s.ctx.kv, install.bot_user_id))!);
  return { w, general, token: token.value, signingSecret: made.signingSecret };
}

Deno.test("block kit: messages take Slack's elements and rich_text; an unknown element is named", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const path = `/channels/${w.team.general_channel_id}/messages`;
    const blocks = [
      {
        type: "rich_text",
        elements: [
          {
            type: "rich_text_section",
            elements: [{ type: "text", text: "Ship " }, {
              type: "text",
              text: "it",
              style: { bold: true },
            }],
          },
          {
            type: "rich_text_list",
            style: "bullet",
            elements: [{ type: "rich_text_section", elements: [{ type: "text", text: "tests" }] }],
          },
        ],
      },
      { type: "image", image_url: "https://example.com/a.png", alt_text: "a chart" },
      {
        type: "section",
        text: { type: "mrkdwn", text: "Pick" },
        accessory: { type: "datepicker", action_id: "d" },
      },
      {
        type: "actions",
        elements: [
          { type: "users_select", action_id: "u" },
          { type: "multi_static_select", action_id: "m", options: [option("x"), option("y")] },
          { type: "checkboxes", action_id: "c", options: [option("x")] },
          { type: "timepicker", action_id: "t", initial_time: "09:30" },
          { type: "external_select", action_id: "e", min_query_length: 2 },
          { type: "channels_select", action_id: "ch" },
        ],
      },
      {
        type: "context",
        elements: [{ type: "image", image_url: "https://example.com/i.png", alt_text: "i" }, {
          type: "mrkdwn",
          text: "note",
        }],
      },
    ];
    const posted = await api(s, "POST", path, { token: w.admin.token, body: { blocks } });
    assertStatus(posted, 201);
    assert.equal(posted.body.data.body, "Ship it\n• tests\nPick\nnote");
    assert.deepEqual(posted.body.data.blocks, blocks);

    // As at Slack, an empty text beside blocks is no text (Bolt for Python's say(blocks=...)).
    const section = [{ type: "section", text: { type: "mrkdwn", text: "From blocks" } }];
    const empty = await api(s, "POST", path, {
      token: w.admin.token,
      body: { body: "", blocks: section },
    });
    assertStatus(empty, 201);
    assert.equal(empty.body.data.body, "From blocks");
    const viaSlack = await fetch(`${s.url}/api/slack/chat.postMessage`, {
      method: "POST",
      headers: { Authorization: `Bearer ${w.admin.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ channel: w.team.general_channel_id, text: "", blocks: section }),
    }).then((r) => r.json());
    assert.equal(viaSlack.ok, true, JSON.stringify(viaSlack));
    assert.equal(viaSlack.message.text, "From blocks");

    const unknown = await api(s, "POST", path, {
      token: w.admin.token,
      body: { blocks: [{ type: "actions", elements: [{ type: "rocket_launcher" }] }] },
    });
    assertInvalid(unknown, "blocks");
    assert.match(unknown.body.errors.blocks[0], /^\/blocks\/0\/elements\/0\/type: /);
    const badDate = await api(s, "POST", path, {
      token: w.admin.token,
      body: {
        blocks: [{
          type: "actions",
          elements: [{ type: "datepicker", initial_date: "2026-13-40" }],
        }],
      },
    });
    assertInvalid(badDate, "blocks");
    assert.match(badDate.body.errors.blocks[0], /^\/blocks\/0\/elements\/0\/initial_date: /);
  } finally {
    await s.close();
  }
});

Deno.test({
  name:
    "block kit: a modal pressed inside pushes a second view, and is submitted with Slack's state values",
  ignore: !slackSdks,
  fn: async () => {
    const s = await startServer();
    const port = freePort();
    let app: Awaited<ReturnType<typeof surveyApp>> | null = null;
    try {
      const { w, general, ...keys } = await installed(s, `http://127.0.0.1:${port}/slack/events`);
      app = await surveyApp(s, { ...keys, port });
      const stream = await connect(`${s.url}/api/v1/events/stream`, w.member.token);
      let viewId = "";
      try {
        const run = await api(s, "POST", `/channels/${general}/commands`, {
          token: w.member.token,
          body: { command: "/survey" },
        });
        assert.equal(run.body.data.status, "acknowledged");
        await waitUntil(() => stream.events.some((e) => e.event === "view.opened"), 5_000, "view");
        viewId = stream.events.find((e) => e.event === "view.opened")!.data.id;
      } finally {
        await stream.close();
      }
      const as = (token: string, verb: string, body: unknown) =>
        api(s, "POST", `/views/${viewId}/${verb}`, { token, body });
      const press = (body: unknown) => as(w.member.token, "actions", body);

      // A radio button picked meanwhile: the app hears the choice and the state so far.
      const mood = await press({
        action_id: "mood",
        selected_option: { value: "glad" },
        values: { when: { date: { selected_date: "2026-12-24" } } },
      });
      assertStatus(mood, 200);
      assert.equal(mood.body.data.status, "acknowledged");
      assert.equal(mood.body.data.view.id, viewId);
      const heardMood = app.heard.presses[0];
      assert.deepEqual(heardMood.container, { type: "view", view_id: viewId });
      assert.deepEqual(heardMood.actions[0].selected_option, option("glad"));
      assert.equal(heardMood.view.state.values.when.date.selected_date, "2026-12-24");
      assert.equal(heardMood.view.state.values.who.user.selected_user, null);
      assertInvalid(
        await press({ action_id: "mood", selected_option: { value: "meh" } }),
        "selected_option",
      );
      assertInvalid(await press({ action_id: "mood" }), "value");
      assertInvalid(await press({ action_id: "nothing" }), "action_id");

      // views.update by the external_id the app gave the view.
      const updated = await fetch(`${s.url}/api/slack/views.update`, {
        method: "POST",
        headers: { Authorization: `Bearer ${keys.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          external_id: "survey-1",
          view: { ...SURVEY, title: plain("Survey!") },
        }),
      }).then((r) => r.json());
      assert.deepEqual([updated.ok, updated.view?.id, updated.view?.title.text], [
        true,
        viewId,
        "Survey!",
      ]);
      assertStatus(
        await as((await actor(s.ctx, w.team, "Other", "member")).token, "actions", {
          action_id: "more",
        }),
        404,
      );

      // An external menu: the app offers options as the person types (Bolt's app.options).
      const options = (value: string) =>
        api(s, "GET", `/views/${viewId}/options?action_id=ext&value=${value}`, {
          token: w.member.token,
        });
      const offered = await options("ap");
      assertStatus(offered, 200);
      assert.deepEqual(offered.body.data.options.map((o: { value: string }) => o.value), [
        "api",
        "app",
      ]);
      assert.deepEqual((await options("a")).body.data.options, [], "shorter than min_query_length");
      assertInvalid(
        await api(s, "GET", `/views/${viewId}/options?action_id=date`, { token: w.member.token }),
        "action_id",
      );

      // What the inputs don't offer is refused before the app hears of it, naming the input.
      const other = await workspace(s.ctx);
      const hidden = await api(s, "POST", "/channels", {
        token: w.admin.token,
        body: { name: "hidden", visibility: "private" },
      });
      const submit = (values: unknown) => as(w.member.token, "submit", { values });
      const good = {
        when: { date: { selected_date: "2026-12-24" } },
        who: { user: { selected_user: w.admin.user.id } },
        where: { conv: { selected_conversation: general } },
        count: { n: { value: "3" } },
        picks: { boxes: { selected_options: [{ value: "b" }] } },
      };
      for (
        const [bad, why] of [
          [{ ...good, when: { date: { selected_date: "2026-02-30" } } }, /^when\/date: a date/],
          [
            { ...good, who: { user: { selected_user: other.admin.user.id } } },
            /^who\/user: no such user/,
          ],
          [
            { ...good, where: { conv: { selected_conversation: hidden.body.data.id } } },
            /^where\/conv: no such conversation/,
          ],
          [{ ...good, count: { n: { value: "2.5" } } }, /^count\/n: a whole number/],
          [{ ...good, count: { n: { value: "11" } } }, /^count\/n: at most 10/],
          [
            { ...good, picks: { boxes: { selected_options: [{ value: "z" }] } } },
            /^picks\/boxes: no option/,
          ],
          [{ ...good, who: {} }, /^who\/user: is required/],
        ] as const
      ) {
        const refused = await submit(bad);
        assertInvalid(refused, "values");
        assert.match(refused.body.errors.values[0], why);
      }
      assert.equal(app.heard.submitted.length, 0, "nothing refused reached the app");

      // The button: the app pushes a second view with the press's trigger.
      const pushes = await connect(`${s.url}/api/v1/events/stream`, w.member.token);
      let pushed: { id: string; previous_view_id: string; root_view_id: string };
      try {
        assertStatus(await press({ action_id: "more", block_id: "acts" }), 200);
        const isMore = (e: { event?: string; data: { title?: { text: string } } }) =>
          e.event === "view.opened" && e.data.title?.text === "More";
        await waitUntil(() => pushes.events.some(isMore), 5_000, "the pushed view");
        pushed = pushes.events.find(isMore)!.data;
      } finally {
        await pushes.close();
      }
      assert.equal(pushed.previous_view_id, viewId);
      assert.equal(pushed.root_view_id, viewId);
      assert.deepEqual(app.heard.presses[1].container, { type: "view", view_id: viewId });
      assertInvalid(await submit(good), "view", "the survey is under the pushed view");
      const back = await api(s, "POST", `/views/${pushed.id}/submit`, {
        token: w.member.token,
        body: { values: {} },
      });
      assertStatus(back, 200);
      assert.equal(back.body.data, null);
      // Back on the survey (the pushed view submitted closes only itself): submitted as Slack's state.
      const done = await submit({
        ...good,
        where: {},
        repo: { ext: { selected_option: { value: "api", text: plain("api") } } },
      });
      assertStatus(done, 200);
      const state = app.heard.submitted[0];
      assert.deepEqual(state.when.date, { type: "datepicker", selected_date: "2026-12-24" });
      assert.deepEqual(state.who.user, { type: "users_select", selected_user: w.admin.user.id });
      assert.deepEqual(state.where.conv, {
        type: "conversations_select",
        selected_conversation: null,
      });
      assert.deepEqual(state.count.n, { type: "number_input", value: "3" });
      assert.deepEqual(state.repo.ext, {
        type: "external_select",
        selected_option: { text: plain("api"), value: "api" },
      });
      assert.deepEqual(state.picks.boxes, { type: "checkboxes", selected_options: [option("b")] });
    } finally {
      await app?.stop();
      await s.close();
    }
  },
});
