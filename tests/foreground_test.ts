import assert from "node:assert/strict";
import { Foreground } from "../core/foreground.ts";
import { Dispatcher } from "../core/dispatcher.ts";

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
  await dispatcher.idle();
  assert.deepEqual(started, [0, 1, 2]);
});
