/**
 * An AI agent written with Slack's Bolt framework, as Slack's agent templates write one: nothing in
 * it knows this service but the values it is started with (docs/agents.md).
 *
 * - A person starts a thread with it (assistant_view): it greets them, keeps what they look at as
 *   the thread's context, and suggests prompts. Each message in the thread: a title, a status,
 *   then the model's answer streamed with its tasks, and feedback buttons at the end.
 * - A person opens its Messages tab (agent_view): it suggests prompts there, and answers each
 *   message in the conversation with a streamed reply in that message's thread.
 *
 *   SLACK_BOT_TOKEN=tcb_... SLACK_APP_TOKEN=xapp-... SLACK_API_URL=http://localhost:8080/api/slack/ \
 *   OPENAI_BASE_URL=http://localhost:8700/v1 \
 *     deno run --lock=tests/deno.lock --frozen --allow-net --allow-env --allow-sys=osRelease \
 *     examples/agent_app.ts
 *
 * With SLACK_APP_TOKEN it runs in Socket Mode (examples/agent_manifest.yaml); without, it listens on
 * APP_PORT (3000 unless set) for request URLs and checks requests with SLACK_SIGNING_SECRET.
 * OPENAI_BASE_URL is any server of OpenAI's Responses API: examples/stub_model.ts, say.
 */
import bolt from "npm:@slack/bolt@5.1.0";

const appToken = Deno.env.get("SLACK_APP_TOKEN");
const modelUrl = Deno.env.get("OPENAI_BASE_URL") ?? "https://api.openai.com/v1";
const app = new bolt.App({
  token: Deno.env.get("SLACK_BOT_TOKEN"),
  clientOptions: { slackApiUrl: Deno.env.get("SLACK_API_URL") },
  ...(appToken
    ? { socketMode: true, appToken }
    : { signingSecret: Deno.env.get("SLACK_SIGNING_SECRET") ?? "" }),
});

const PROMPTS = [
  { title: "Summarize", message: "What happened in my channels today?" },
  { title: "Brainstorm", message: "Help me name our new project" },
];

const LOADING = ["Reading the thread…", "Asking the model…"];

const feedback = {
  type: "context_actions",
  elements: [{
    type: "feedback_buttons",
    action_id: "feedback",
    positive_button: { text: { type: "plain_text", text: "Good Response" }, value: "good" },
    negative_button: { text: { type: "plain_text", text: "Bad Response" }, value: "bad" },
  }],
};

/** What a streamed reply needs: a way to add to it, and to end it. */
interface Streamer {
  append(args: Record<string, unknown>): Promise<unknown>;
  stop(args?: Record<string, unknown>): Promise<unknown>;
}

/** Each piece of text the model streams for `prompt` (OpenAI's Responses API, `stream: true`). */
async function* modelSays(prompt: string): AsyncGenerator<string> {
  const res = await fetch(`${modelUrl}/responses`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Authorization: `Bearer ${Deno.env.get("OPENAI_API_KEY") ?? "none"}`,
    },
    body: JSON.stringify({ model: "gpt-4o-mini", input: prompt, stream: true }),
  });
  if (!res.ok || !res.body) throw new Error(`the model answered HTTP ${res.status}`);
  let pending = "";
  for await (const text of res.body.pipeThrough(new TextDecoderStream())) {
    pending += text;
    const events = pending.split("\n\n");
    pending = events.pop()!;
    for (const event of events) {
      const data = event.split("\n").find((line) => line.startsWith("data: "));
      const parsed = data ? JSON.parse(data.slice(6)) : null;
      if (parsed?.type === "response.output_text.delta") yield parsed.delta;
    }
  }
}

/** The model's answer to `prompt` into `streamer`, as one task it works through, then feedback. */
async function answer(streamer: Streamer, prompt: string) {
  const task = { type: "task_update", id: "model", title: "Asking the model" };
  await streamer.append({ chunks: [{ ...task, status: "in_progress" }] });
  for await (const piece of modelSays(prompt)) await streamer.append({ markdown_text: piece });
  await streamer.stop({
    chunks: [{ ...task, status: "complete", output: "Answered" }],
    blocks: [feedback],
  });
}

const assistant = new bolt.Assistant({
  threadStarted: async ({ event, say, setSuggestedPrompts, saveThreadContext }) => {
    await say("Hi, how can I help?");
    await saveThreadContext();
    const { context } = event.assistant_thread;
    await setSuggestedPrompts({
      title: context.channel_id ? "About this channel:" : "Try these:",
      prompts: PROMPTS,
    });
  },
  threadContextChanged: async ({ saveThreadContext }) => {
    await saveThreadContext();
  },
  userMessage: async ({ message, setTitle, setStatus, sayStream }) => {
    if (!("text" in message) || !message.text) return;
    await setTitle(message.text);
    await setStatus({ status: "is thinking…", loading_messages: LOADING });
    await answer(sayStream({ task_display_mode: "timeline", buffer_size: 16 }), message.text);
  },
});
app.assistant(assistant);

// agent_view: the Messages tab is the conversation itself; its prompts need no thread.
app.event("app_home_opened", async ({ event, client }) => {
  if (event.tab !== "messages") return;
  await client.assistant.threads.setSuggestedPrompts({
    channel_id: event.channel,
    title: "How can I help you today?",
    prompts: PROMPTS,
  } as never);
});

// A message in the conversation (not in a thread, which the assistant answers above).
app.message(async ({ message, setStatus, sayStream }) => {
  if (message.subtype !== undefined || !("text" in message) || !message.text) return;
  await setStatus!({ status: "is thinking…", loading_messages: LOADING });
  await answer(sayStream!({ task_display_mode: "plan", buffer_size: 16 }), message.text);
});

app.action("feedback", async ({ ack, body, client }) => {
  await ack();
  if (body.type !== "block_actions" || !body.channel || !body.message) return;
  const value = (body.actions[0] as { value?: string }).value;
  await client.chat.postEphemeral({
    channel: body.channel.id,
    user: body.user.id,
    thread_ts: body.message.ts,
    text: value === "good" ? "Glad it helped." : "Sorry; a new chat may do better.",
  });
});

await app.start(Number(Deno.env.get("APP_PORT") ?? 3000));
console.log(appToken ? "Agent connected in Socket Mode" : "Agent listening");
