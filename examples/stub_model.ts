/**
 * A stand-in for a language model, for trying an agent without one: it answers OpenAI's Responses
 * API (`POST /v1/responses`, the call Slack's agent templates make through the `openai` package)
 * with a fixed answer, streamed a few words at a time (`stream: true`) or whole.
 *
 *   STUB_MODEL_PORT=8700 deno run --allow-net --allow-env examples/stub_model.ts
 *
 * Point an agent at it with `OPENAI_BASE_URL=http://localhost:8700/v1` (and any OPENAI_API_KEY);
 * examples/agent_app.ts takes the same variable. STUB_ANSWER sets what it says.
 */

const ANSWER = Deno.env.get("STUB_ANSWER") ??
  "Here is what I found: **three** channels were busy today, and #general most of all.";

/** The answer in the pieces a model streams: a word and the space before it. */
const pieces = (text: string) => text.match(/\s*\S+/g) ?? [];

const sse = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** A Responses API answer, as `responses.create` returns one without `stream`. */
function whole(id: string, model: string) {
  return {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "completed",
    model,
    output: [{
      id: `msg_${id}`,
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: ANSWER, annotations: [] }],
    }],
    output_text: ANSWER,
    usage: { input_tokens: 1, output_tokens: pieces(ANSWER).length, total_tokens: 1 },
  };
}

/** The same answer as Server-Sent Events, in the order OpenAI sends them. */
function streamed(id: string, model: string): ReadableStream<Uint8Array> {
  const done = whole(id, model);
  const item = done.output[0];
  const events = [
    sse("response.created", { response: { ...done, status: "in_progress", output: [] } }),
    sse("response.output_item.added", { output_index: 0, item: { ...item, content: [] } }),
    ...pieces(ANSWER).map((delta) =>
      sse("response.output_text.delta", { item_id: item.id, output_index: 0, delta })
    ),
    sse("response.output_text.done", { item_id: item.id, output_index: 0, text: ANSWER }),
    sse("response.output_item.done", { output_index: 0, item }),
    sse("response.completed", { response: done }),
  ];
  const encoder = new TextEncoder();
  return new ReadableStream({
    async pull(controller) {
      const next = events.shift();
      if (next === undefined) return controller.close();
      controller.enqueue(encoder.encode(next));
      // A model takes its time between words; so does this one, a little.
      await new Promise((r) => setTimeout(r, 10));
    },
  });
}

async function answer(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname;
  if (req.method !== "POST" || !path.endsWith("/responses")) {
    return Response.json({ error: { message: "Only POST /v1/responses is here." } }, {
      status: 404,
    });
  }
  const body = await req.json().catch(() => ({}));
  const model = typeof body.model === "string" ? body.model : "stub";
  const id = `resp_${crypto.randomUUID().replaceAll("-", "")}`;
  if (body.stream !== true) return Response.json(whole(id, model));
  return new Response(streamed(id, model), {
    headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" },
  });
}

Deno.serve({
  port: Number(Deno.env.get("STUB_MODEL_PORT") ?? 8700),
  hostname: "127.0.0.1",
  onListen: ({ port }) => console.log(`Stub model listening on http://127.0.0.1:${port}/v1`),
}, answer);
