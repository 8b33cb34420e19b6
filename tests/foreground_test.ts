import assert from "node:assert/strict";
import { Foreground } from "../core/foreground.ts";
import { Dispatcher } from "../core/dispatcher.ts";
import { startSoon } from "../core/after_answers.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

Deno.test("foreground: background work goes at once while no request is in flight", () => {
  assert.equal(new Foreground().turn(), undefined);
});

Deno.test("foreground: background work waits for the request in front, then goes", async () => {
  const fg = new Foreground();
  const order: string[] = [];
  const { promise: answered, resolve: answer } = Promise.withResolvers<void>();
  const request = fg.during(async () => {
    await answered;
    order.push("request");
  });
  const background = fg.turn()!.then(() => order.push("background"));
  await sleep(1);
  answer();
  await Promise.all([request, background]);
  assert.deepEqual(order, ["request", "background"]);
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
  assert.ok(went, "background work went while requests were still coming");
});

Deno.test("foreground: a request counts as in front for its first moments only", async () => {
  const fg = new Foreground();
  const { promise: answered, resolve: answer } = Promise.withResolvers<void>();
  const request = fg.during(() => answered);
  await sleep(80);
  assert.equal(fg.turn(), undefined, "a request waiting on something else holds nothing back");
  answer();
  await request;
});

Deno.test("foreground: a failing request lets go too", async () => {
  const fg = new Foreground();
  await assert.rejects(fg.during(() => Promise.reject(new Error("boom"))), /boom/);
  assert.equal(fg.turn(), undefined);
});

Deno.test("foreground: the dispatcher starts no task while a request is in front, then all it may", async () => {
  const fg = new Foreground();
  const dispatcher = new Dispatcher(
    { global: 4, perLane: 4, maxPerLane: 4, window: 10, laneWindow: 10 },
    () => fg.turn(),
  );
  const started: number[] = [];
  const { promise: answered, resolve: answer } = Promise.withResolvers<void>();
  const request = fg.during(() => answered);
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
  await sleep(1); // they start right after the request, not within its last step
  await dispatcher.idle();
  assert.deepEqual(started, [0, 1, 2]);
});

/**
 * When another process saw the headers of the answer `handle` gave (Date.now(), one clock): the
 * server's loop is the one `handle` and what it sets going may keep busy.
 */
async function answerSeenAt(handle: () => Response | Promise<Response>): Promise<number> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handle);
  try {
    const client = await new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `const r = await fetch("http://127.0.0.1:${server.addr.port}/"); ` +
        `console.log(Date.now()); await r.body?.cancel();`,
      ],
      stdout: "piped",
    }).output();
    return Number(new TextDecoder().decode(client.stdout));
  } finally {
    await server.shutdown();
  }
}

/** Keeps the loop busy for `ms`, as starting an attempt does for about 50 µs. */
const busy = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until) { /* busy */ }
};

Deno.test("foreground: many tasks a request held back start once its answer is written", async () => {
  const fg = new Foreground();
  const dispatcher = new Dispatcher(
    { global: 64, perLane: 1, maxPerLane: 1, window: 64, laneWindow: 1 },
    () => fg.turn(),
  );
  const starts: number[] = [];
  const seen = await answerSeenAt(() =>
    fg.during(() => {
      for (let i = 0; i < 64; i++) {
        dispatcher.submit({
          key: `t${i}`,
          lane: `lane${i}`,
          run: () => Promise.resolve(void (starts.push(Date.now()), busy(10))),
        });
      }
      return new Response("ok");
    })
  );
  while (starts.length < 64) await sleep(10);
  await dispatcher.idle();
  // Started as the request let go, the 64 would hold its answer back 640 ms.
  assert.ok(seen < starts[0] + 320, `answer seen ${seen - starts[0]} ms after the first start`);
});

Deno.test("foreground: many tasks a commit hands over start once the answer is written", async () => {
  await using kv = await Deno.openKv(":memory:");
  let began = 0;
  // As a post's commit hands its first attempts over, then the handler answers.
  const seen = await answerSeenAt(async () => {
    await kv.set(["post"], 1);
    startSoon(100, () => {
      began = Date.now();
      busy(400);
    });
    return new Response("ok");
  });
  assert.ok(began > 0, "the work ran");
  assert.ok(seen < began + 200, `answer seen ${seen - began} ms after the work began`);
});
