import assert from "node:assert/strict";
import { Foreground } from "../core/foreground.ts";
import { Dispatcher } from "../core/dispatcher.ts";
import { afterAnswers } from "../core/after_answers.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** A later turn of the loop: a request's answer has been written by then. */
const answered = () => new Promise<void>((r) => afterAnswers(r));

Deno.test("foreground: background work goes at once while no request is in flight", () => {
  assert.equal(new Foreground().turn(), undefined);
});

Deno.test("foreground: background work waits for the request in front, then goes", async () => {
  const fg = new Foreground();
  const order: string[] = [];
  const { promise: replied, resolve: answer } = Promise.withResolvers<void>();
  const request = fg.during(async () => {
    await replied;
    order.push("request");
  });
  const background = fg.turn()!.then(() => order.push("background"));
  await sleep(1);
  answer();
  await Promise.all([request, background]);
  assert.deepEqual(order, ["request", "background"]);
  await answered();
  assert.equal(fg.turn(), undefined);
});

Deno.test("foreground: requests that never let up don't stop background work", async () => {
  const fg = new Foreground();
  // For 400 ms a request starts every 2 ms and takes 10: never a moment without one in front.
  const requests: Promise<void>[] = [];
  const until = performance.now() + 400;
  const starting = (async () => {
    while (performance.now() < until) {
      requests.push(fg.during(() => sleep(10)));
      await sleep(2);
    }
  })();
  await sleep(5);
  let went = false;
  await fg.turn()?.then(() => went = performance.now() < until);
  await starting;
  await Promise.all(requests);
  await answered();
  assert.ok(went, "background work went while requests were still coming");
});

Deno.test("foreground: a request counts as in front for its first moments only", async () => {
  const fg = new Foreground();
  const { promise: replied, resolve: answer } = Promise.withResolvers<void>();
  const request = fg.during(() => replied);
  await sleep(80);
  assert.equal(fg.turn(), undefined, "a request waiting on something else holds nothing back");
  answer();
  await request;
  await answered();
});

Deno.test("foreground: a failing request lets go too", async () => {
  const fg = new Foreground();
  await assert.rejects(fg.during(() => Promise.reject(new Error("boom"))), /boom/);
  await answered();
  assert.equal(fg.turn(), undefined);
});

Deno.test("foreground: the dispatcher starts no task while a request is in front, then all it may", async () => {
  const fg = new Foreground();
  const dispatcher = new Dispatcher(
    { global: 4, perLane: 4, maxPerLane: 4, window: 10, laneWindow: 10 },
    () => fg.turn(),
  );
  const started: number[] = [];
  const { promise: replied, resolve: answer } = Promise.withResolvers<void>();
  const request = fg.during(() => replied);
  for (let i = 0; i < 3; i++) {
    dispatcher.submit({
      key: `t${i}`,
      lane: "a",
      run: () => Promise.resolve(void started.push(i)),
    });
  }
  await sleep(5);
  assert.deepEqual(started, [], "nothing starts while the request is in front");
  answer();
  await request;
  assert.deepEqual(started, [], "nor before the request's answer is written");
  await answered();
  await dispatcher.idle();
  assert.deepEqual(started, [0, 1, 2]);
});

/**
 * Serves one request with `handle`, fetched by another process (the server's loop is the one
 * `handle` may block); when that process saw the answer's headers, and when `handle`'s blocking
 * work began (Date.now(), one clock).
 */
async function answerSeenAt(
  handle: (block: () => void) => Response | Promise<Response>,
): Promise<{ seen: number; blocked: number }> {
  let blocked = 0;
  const block = () => {
    blocked = Date.now();
    while (Date.now() < blocked + BLOCK_MS) { /* the loop is busy, as with attempts to start */ }
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => handle(block));
  try {
    const client = await new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `const r = await fetch("http://127.0.0.1:${server.addr.port}/"); ` +
        `console.log(Date.now()); await r.body?.cancel();`,
      ],
      stdout: "piped",
    }).output();
    return { seen: Number(new TextDecoder().decode(client.stdout)), blocked };
  } finally {
    await server.shutdown();
  }
}
const BLOCK_MS = 400;

Deno.test("foreground: background work a request held back starts once its answer is written", async () => {
  const fg = new Foreground();
  await using kv = await Deno.openKv(":memory:");
  const { seen, blocked } = await answerSeenAt((block) =>
    fg.during(async () => {
      void fg.turn()!.then(block);
      await kv.set(["post"], 1);
      return new Response("ok");
    })
  );
  assert.ok(blocked > 0, "the background work ran");
  assert.ok(seen < blocked + BLOCK_MS / 2, `answer seen ${seen - blocked} ms after work began`);
});

Deno.test("foreground: work started after an answer doesn't hold that answer back", async () => {
  await using kv = await Deno.openKv(":memory:");
  // As a post's commit hands its first attempts over, then the handler answers.
  const { seen, blocked } = await answerSeenAt(async (block) => {
    await kv.set(["post"], 1);
    afterAnswers(block);
    return new Response("ok");
  });
  assert.ok(blocked > 0, "the work ran");
  assert.ok(seen < blocked + BLOCK_MS / 2, `answer seen ${seen - blocked} ms after work began`);
});
