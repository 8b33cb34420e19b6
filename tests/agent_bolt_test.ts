/**
 * An agent written with Slack's Bolt (`npm:@slack/bolt@5.1.0`), unmodified: examples/agent_app.ts,
 * the pattern of Slack's assistant template (`Assistant`: threadStarted → setSuggestedPrompts,
 * userMessage → setStatus → sayStream with task chunks → stop with feedback buttons) and of its
 * starter agent (agent_view: the Messages tab's prompts with no thread, a streamed reply), against
 * a stub model of ours that streams a fixed answer (examples/stub_model.ts); in Socket Mode and
 * over a request URL. A person's side is the REST API and their live stream.
 */
import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import {
  api,
  assertStatus,
  signedInCookie,
  startServer,
  type TestServer,
  workspace,
} from "./harness.ts";
import { freePort, watch, type Watched } from "./processes.ts";
import { connect, type StreamClient } from "./sse_client.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { SKIPPED_WITHOUT_SDKS, slackSdks } from "./slack_sdks.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { createAppToken } from "../domain/apps/socket/app_tokens.ts";

const MANIFEST = new URL("../examples/agent_manifest.yaml", import.meta.url);
const ANSWER = "Three channels were busy today, and general most of all.";

const example = (name: string) => new URL(`../examples/${name}`, import.meta.url).pathname;

/** The stub model as its own process, as docs/agents.md runs it: its base URL. */
async function stubModel(): Promise<{ url: string; process: Watched }> {
  const port = freePort();
  const process = watch(Deno.execPath(), [
    "run",
    "--allow-net",
    "--allow-env",
    example("stub_model.ts"),
  ], { STUB_MODEL_PORT: String(port), STUB_ANSWER: ANSWER });
  await waitUntil(() => process.output().includes("listening"), 30_000, "the stub model");
  return { url: `http://127.0.0.1:${port}/v1`, process };
}

/** The agent's app, from the example's manifest (its request URLs on `port`, when given). */
async function agentApp(s: TestServer, port: number | null) {
  const w = await workspace(s.ctx);
  const manifest = parseYaml(await Deno.readTextFile(MANIFEST));
  if (port !== null) {
    const url = `http://127.0.0.1:${port}/slack/events`;
    manifest.settings.socket_mode_enabled = false;
    manifest.settings.event_subscriptions.request_url = url;
    manifest.settings.interactivity.request_url = url;
  }
  const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest), null);
  const { token } = await installApp(s.ctx, {
    app: made.app,
    teamId: w.team.id,
    scopes: made.app.scopes,
    channelId: null,
    approvedBy: null,
  });
  return { w, app: made.app, bot: token.value, signingSecret: made.signingSecret };
}

/** The example agent, running as docs/agents.md runs it, in Socket Mode or on `port`. */
async function runAgent(
  s: TestServer,
  { bot, modelUrl, socket }: {
    bot: string;
    modelUrl: string;
    socket: { appToken: string } | { port: number; signingSecret: string };
  },
): Promise<Watched> {
  const agent = watch(Deno.execPath(), [
    "run",
    `--lock=${new URL("./deno.lock", import.meta.url).pathname}`,
    "--frozen",
    "--allow-net",
    "--allow-env",
    "--allow-sys=osRelease",
    example("agent_app.ts"),
  ], {
    SLACK_BOT_TOKEN: bot,
    SLACK_API_URL: `${s.url}/api/slack/`,
    OPENAI_BASE_URL: modelUrl,
    ...("appToken" in socket
      ? { SLACK_APP_TOKEN: socket.appToken }
      : { APP_PORT: String(socket.port), SLACK_SIGNING_SECRET: socket.signingSecret }),
  });
  await waitUntil(() => /Agent (connected|listening)/.test(agent.output()), 60_000, "the agent")
    .catch((e) => {
      throw new Error(`${e.message}:\n${agent.output()}`);
    });
  return agent;
}

interface Said {
  id: string;
  ts: string;
  body: string;
  text: string;
  blocks: { type: string; [k: string]: unknown }[] | null;
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  author: { type: string };
}

/** The agent's reply in a thread after `asked`, once the person's stream heard it created. */
async function streamedReply(person: StreamClient, asked: { rootId: string; ts: string }) {
  const isReply = (e: { event: string; data: { data?: Said & { thread_root_id: string } } }) =>
    e.event === "message.created" && e.data.data?.thread_root_id === asked.rootId &&
    e.data.data.author.type === "bot" && e.data.data.ts > asked.ts;
  await waitUntil(() => person.events.some(isReply), 30_000, "the streamed reply, stopped");
  return person.events.find(isReply)!.data.data as Said;
}

/** What the person saw while the reply streamed: each addition's text so far. */
const streamedSoFar = (person: StreamClient, ts: string): string[] =>
  person.events
    .filter((e) => e.event === "message.streaming" && e.data.message.ts === ts)
    .map((e) => e.data.message.text);

/** A streamed reply as the example writes one: its task done, the answer, feedback buttons. */
function assertAnswer(reply: Said, person: StreamClient) {
  assert.deepEqual(
    reply.blocks!.map((b) => b.type).sort(),
    [
      "context_actions",
      "markdown",
      reply.blocks!.some((b) => b.type === "plan") ? "plan" : "task_card",
    ].sort(),
  );
  assert.ok(reply.text.includes(ANSWER), reply.text);
  assert.ok(reply.text.includes("Asking the model"), reply.text);
  const soFar = streamedSoFar(person, reply.ts);
  assert.ok(soFar.length >= 3, `only ${soFar.length} additions streamed`);
  assert.ok(soFar.some((t) => t.length < ANSWER.length), "the answer came whole");
}

/** Presses the reply's "Good Response"; the agent thanks the person, to them alone. */
async function pressFeedback(
  s: TestServer,
  { token, person, reply, channelId }: {
    token: string;
    person: StreamClient;
    reply: Said;
    channelId: string;
  },
) {
  const pressed = await api(s, "POST", `/channels/${channelId}/messages/${reply.id}/actions`, {
    token,
    body: { action_id: "feedback", value: "good" },
  });
  assertStatus(pressed, 200);
  await waitUntil(
    () =>
      person.events.some((e) =>
        e.event === "message.ephemeral" && e.data.text === "Glad it helped."
      ),
    15_000,
    "the agent's thanks",
  );
}

/** A person starts a thread with the agent, asks in it, and reads the answer as it streams. */
async function threadConversation(transport: "socket" | "request url") {
  const s = await startServer({}, { engine: true });
  const model = await stubModel();
  let agent: Watched | null = null;
  try {
    const port = transport === "socket" ? null : freePort();
    const { w, app, bot, signingSecret } = await agentApp(s, port);
    const socket = port === null
      ? {
        appToken: (await createAppToken(s.ctx, { appId: app.id, name: null, actor: null })).token,
      }
      : { port, signingSecret };
    agent = await runAgent(s, { bot, modelUrl: model.url, socket });
    const person = await connect(`${s.url}/api/v1/events/stream`, w.member.token);
    const general = w.team.general_channel_id;

    const started = await api(s, "POST", `/apps/${app.id}/threads`, {
      token: w.member.token,
      body: { context: { channel_id: general } },
    });
    assertStatus(started, 201);
    const { channel_id: dm, thread_ts: threadTs } = started.body.data;
    const rootId = await idOf(s, { token: w.member.token, channelId: dm, ts: threadTs });
    await waitUntil(
      () => person.events.some((e) => e.event === "assistant.suggested_prompts"),
      30_000,
      "the agent's prompts",
    ).catch((e) => {
      throw new Error(`${e.message}:\n${agent!.output()}`);
    });
    const thread = await api(s, "GET", `/apps/${app.id}/threads/${threadTs}`, {
      token: w.member.token,
    });
    assert.equal(thread.body.data.suggested_prompts.title, "About this channel:");
    const replies = async () =>
      (await api(s, "GET", `/channels/${dm}/messages?thread_root_id=${rootId}`, {
        token: w.member.token,
      })).body.data as Said[];
    // The greeting carries the thread's context, as Bolt's context store keeps it.
    const greeting = (await replies()).find((m) => m.body === "Hi, how can I help?")!;
    assert.deepEqual(greeting.metadata, {
      event_type: "assistant_thread_context",
      event_payload: { channel_id: general, team_id: w.team.id, enterprise_id: null },
    });

    const asked = await api(s, "POST", `/channels/${dm}/messages`, {
      token: w.member.token,
      body: { body: "What happened in my channels today?", thread_root_id: rootId },
    });
    assertStatus(asked, 201);
    const reply = await streamedReply(person, { rootId, ts: asked.body.data.ts }).catch((e) => {
      throw new Error(`${e.message}:\n${agent!.output()}`);
    });
    assertAnswer(reply, person);
    const titled = await api(s, "GET", `/apps/${app.id}/threads/${threadTs}`, {
      token: w.member.token,
    });
    assert.equal(titled.body.data.status, "");
    const root = await api(s, "GET", `/channels/${dm}/messages/${rootId}`, {
      token: w.member.token,
    });
    assert.equal(root.body.data.body, "What happened in my channels today?");
    await pressFeedback(s, { token: w.member.token, person, reply, channelId: dm });
    assert.doesNotMatch(agent.output(), /unknown_method|invalid_blocks|invalid_arguments/);
    await person.close();
  } finally {
    await agent?.kill();
    await model.process.kill();
    await s.close();
  }
}

/** The id of the message `ts` of `channelId`, among its latest. */
async function idOf(s: TestServer, { token, channelId, ts }: {
  token: string;
  channelId: string;
  ts: string;
}): Promise<string> {
  const page = await api(s, "GET", `/channels/${channelId}/messages?limit=20`, { token });
  return page.body.data.find((m: Said) => m.ts === ts).id;
}

Deno.test({
  name: `agents with Bolt: Slack's assistant pattern in Socket Mode${SKIPPED_WITHOUT_SDKS}`,
  ignore: !slackSdks,
  fn: () => threadConversation("socket"),
});

Deno.test({
  name: `agents with Bolt: Slack's assistant pattern over a request URL${SKIPPED_WITHOUT_SDKS}`,
  ignore: !slackSdks,
  fn: () => threadConversation("request url"),
});

Deno.test({
  name:
    `agents with Bolt: agent_view's Messages tab, prompts and a streamed reply${SKIPPED_WITHOUT_SDKS}`,
  ignore: !slackSdks,
  async fn() {
    const s = await startServer({}, { engine: true });
    const model = await stubModel();
    let agent: Watched | null = null;
    try {
      const { w, app, bot } = await agentApp(s, null);
      const { token: appToken } = await createAppToken(s.ctx, {
        appId: app.id,
        name: null,
        actor: null,
      });
      agent = await runAgent(s, { bot, modelUrl: model.url, socket: { appToken } });
      const person = await connect(`${s.url}/api/v1/events/stream`, w.member.token);
      const opened = await api(s, "GET", `/apps/${app.id}/home?tab=messages`, {
        token: w.member.token,
      });
      assertStatus(opened, 200);
      const dm = opened.body.data.channel_id;
      await waitUntil(
        async () => {
          const now = await api(s, "GET", `/apps/${app.id}/home?tab=messages`, {
            token: w.member.token,
          });
          return now.body.data.suggested_prompts?.title === "How can I help you today?";
        },
        30_000,
        "the Messages tab's prompts",
      ).catch((e) => {
        throw new Error(`${e.message}:\n${agent!.output()}`);
      });
      const asked = await api(s, "POST", `/channels/${dm}/messages`, {
        token: w.member.token,
        body: { body: "Help me name our new project" },
      });
      assertStatus(asked, 201);
      const reply = await streamedReply(person, {
        rootId: asked.body.data.id,
        ts: asked.body.data.ts,
      }).catch((e) => {
        throw new Error(`${e.message}:\n${agent!.output()}`);
      });
      assertAnswer(reply, person);
      assert.ok(reply.blocks!.some((b) => b.type === "plan"));
      // The team's Apps page says what the agent is.
      const cookie = await signedInCookie(s.url, s.ctx, w.admin.user.id);
      const page = await (await fetch(`${s.url}/settings/integrations/apps`, {
        headers: { Cookie: cookie },
      })).text();
      assert.match(page, /Agent \(agent_view\)<\/dt><dd>An agent that asks a model/);
      assert.doesNotMatch(agent.output(), /unknown_method|invalid_blocks|invalid_arguments/);
      await person.close();
    } finally {
      await agent?.kill();
      await model.process.kill();
      await s.close();
    }
  },
});
