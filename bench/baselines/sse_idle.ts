/**
 * Baseline of an idle event stream: a bare Deno.serve answer of `text/event-stream` that sends
 * one comment and then holds the connection, the least any SSE stream costs on this runtime.
 */
import { baselineArgs, serveBare } from "./shared.ts";

const { port } = baselineArgs();
const hello = new TextEncoder().encode(": connected\n\n");
const open = new Set<ReadableStreamDefaultController<Uint8Array>>();

serveBare(port, () => {
  let held: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      held = controller;
      open.add(controller);
      controller.enqueue(hello);
    },
    cancel() {
      open.delete(held);
    },
  });
  return Promise.resolve(
    new Response(body, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    }),
  );
});
