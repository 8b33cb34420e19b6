/**
 * A Slack app written with Slack's Bolt framework, as it would be for Slack: nothing in it knows
 * this service but the values it is started with. It answers "hello" and mentions, ships
 * with `/ship <where>`, takes its time with `/slow`, asks with a button (`/approve`) and with a
 * form (`/form`).
 *
 *   SLACK_BOT_TOKEN=tcb_... SLACK_SIGNING_SECRET=... SLACK_API_URL=http://localhost:8080/api/slack/ \
 *     deno run --lock=tests/deno.lock --frozen --allow-net --allow-env --allow-sys=osRelease \
 *     examples/bolt_app.ts
 *
 * Register it from examples/bolt_manifest.yaml with `deno task admin app:create --manifest`, then
 * install it with `app:install` (docs/apps.md). It listens on APP_PORT (3000 unless set), where the
 * manifest's request URLs point. Or, from examples/bolt_socket_manifest.yaml, in Socket Mode with
 * no URL at all: give it SLACK_APP_TOKEN (an `xapp-` token from `app:token --app <id>`) instead of
 * SLACK_SIGNING_SECRET.
 */
import bolt from "npm:@slack/bolt@5.1.0";

// With an app-level token it runs in Socket Mode, as Slack's templates do: no request URL, no port.
const appToken = Deno.env.get("SLACK_APP_TOKEN");
const app = new bolt.App({
  token: Deno.env.get("SLACK_BOT_TOKEN"),
  clientOptions: { slackApiUrl: Deno.env.get("SLACK_API_URL") },
  ...(appToken
    ? { socketMode: true, appToken }
    : { signingSecret: Deno.env.get("SLACK_SIGNING_SECRET") ?? "" }),
});

app.message("hello", async ({ message, say }) => {
  if (message.subtype === undefined) await say(`Hi <@${message.user}>!`);
});

app.event("app_mention", async ({ event, say }) => {
  await say({ text: `You called, <@${event.user}>?`, thread_ts: event.ts });
});

app.command("/ship", async ({ command, ack, say, respond, client }) => {
  await ack(`Shipping ${command.text}…`);
  const posted = await say(`:rocket: Shipping ${command.text}…`);
  await client.chat.update({
    channel: posted.channel!,
    ts: posted.ts!,
    text: `:rocket: Shipped ${command.text}.`,
  });
  await respond({
    response_type: "in_channel",
    text: `<@${command.user_id}> shipped ${command.text}.`,
  });
});

app.command("/slow", async ({ command, respond }) => {
  // No ack within 3 s: the person is told the app is still at it (Bolt logs that it was not
  // acknowledged), and the reply comes later, to them alone.
  await new Promise((done) => setTimeout(done, 4_000));
  await respond(`Done thinking about ${command.text || "nothing"}.`);
});

app.command("/approve", async ({ command, ack, say }) => {
  await ack();
  const what = command.text || "the release";
  await say({
    text: `Approve ${what}?`,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: `Approve *${what}*?` } },
      {
        type: "actions",
        block_id: "decision",
        elements: [{
          type: "button",
          action_id: "approve",
          text: { type: "plain_text", text: "Approve" },
          value: what,
          style: "primary",
        }],
      },
    ],
  });
});

app.action("approve", async ({ ack, body, respond }) => {
  await ack();
  await respond({ replace_original: true, text: `Approved by <@${body.user.id}>.` });
});

app.command("/form", async ({ ack, body, client }) => {
  await ack();
  await client.views.open({
    trigger_id: body.trigger_id,
    view: {
      type: "modal",
      callback_id: "name_form",
      title: { type: "plain_text", text: "Who's asking?" },
      submit: { type: "plain_text", text: "Send" },
      blocks: [{
        type: "input",
        block_id: "name",
        label: { type: "plain_text", text: "Your name" },
        element: { type: "plain_text_input", action_id: "value" },
      }],
    },
  });
});

app.view("name_form", async ({ ack, view }) => {
  const name = view.state.values.name.value.value?.trim() ?? "";
  if (!name) {
    await ack({ response_action: "errors", errors: { name: "Please give your name." } });
    return;
  }
  await ack();
  console.log(`Hello, ${name}.`);
});

if (appToken) {
  await app.start();
  console.log("Bolt app connected in Socket Mode");
} else {
  // Not PORT: that is the service's, and a shell that set it for the service would hand it here.
  const port = Number(Deno.env.get("APP_PORT") ?? 3000);
  await app.start(port);
  console.log(`Bolt app listening on http://localhost:${port}/slack/events`);
}
