/**
 * examples/stream_forward.mjs, run as its own process on Deno and on Node as the README says,
 * forwards the live event stream to a receiver on localhost: every event arrives signed, passes
 * the production verifier, and comes exactly once and in order, across a dropped connection.
 */
import assert from "node:assert/strict";
import { Webhook } from "npm:standardwebhooks@1.1.1";
import { startServer, type TestServer, workspace } from "./harness.ts";
import { freePort, startExampleReceiver, watch, type Watched } from "./processes.ts";
import { post, receiver, waitUntil } from "./webhook_receivers.ts";

const FORWARDER = new URL("../examples/stream_forward.mjs", import.meta.url).pathname;
const SECRET = `whsec_${"Abc123xyZ".repeat(4).slice(0, 32)}`;

/** A TCP relay to the service whose open connections can be cut, as a flaky network does. */
function relay(to: string) {
  const { hostname, port } = new URL(to);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  const accepting = (async () => {
    for await (const conn of listener) {
      const upstream = await Deno.connect({ hostname, port: Number(port) });
      open.add(conn).add(upstream);
      conn.readable.pipeTo(upstream.writable).catch(() => {});
      upstream.readable.pipeTo(conn.writable).catch(() => {});
    }
  })().catch(() => {});
  const cut = () => {
    for (const c of open) {
      try {
        c.close();
      } catch {
        // Already closed by the other side.
      }
    }
    open.clear();
  };
  return {
    url: `http://127.0.0.1:${listener.addr.port}`,
    cut,
    async close() {
      listener.close();
      cut();
      await accepting;
    },
  };
}

/** Posts `n` messages; their ids, in order. */
async function postMany(s: TestServer, token: string, channelId: string, n: number, tag: string) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await post(s, token, channelId, `${tag} ${i}`)).id);
  return ids;
}

/**
 * Runs the forwarder with `command` to `forwardTo`, posts 20 messages, cuts its connection,
 * posts 20 more; returns the message ids posted and the forwarder's output.
 */
async function forwardAcrossADrop(
  command: (args: string[]) => [string, string[]],
  forwardTo: string,
  delivered: () => string[],
) {
  const s = await startServer();
  const link = relay(s.url);
  let forwarder: Watched | undefined;
  try {
    const w = await workspace(s.ctx);
    const general = w.team.general_channel_id;
    const [bin, args] = command(["--url", link.url, "--forward-to", forwardTo]);
    forwarder = watch(bin, args, { TOKEN: w.member.token, WEBHOOK_SECRET: SECRET });
    await waitUntil(() => forwarder!.output().includes("Connected"), 20_000, "it to connect");
    const posted = await postMany(s, w.admin.token, general, 20, "before");
    await waitUntil(() => delivered().length >= 20, 10_000, "the first 20 forwarded");
    link.cut();
    posted.push(...await postMany(s, w.admin.token, general, 20, "while away"));
    await waitUntil(() => delivered().length >= 40, 10_000, "all 40 forwarded");
    // The receiver has answered; the forwarder logs each answer just after it reads it.
    const logged = () => forwarder!.output().match(/ → 2\d\d$/gm)?.length ?? 0;
    await waitUntil(() => logged() >= 40, 10_000, "the forwarder to log 40 answers");
    assert.match(forwarder.output(), /resuming after /);
    return { posted, output: forwarder.output() };
  } finally {
    await forwarder?.kill();
    await link.close();
    await s.close();
  }
}

Deno.test("stream forward (Deno): the README's receiver gets every event once, in order, across a drop", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stream-forward-" });
  const port = freePort();
  const handler = startExampleReceiver(SECRET, port, dir);
  try {
    await waitUntil(() => handler.output().includes("Listening on"), 20_000, "the receiver");
    // The receiver prints each event it verified and handled the first time.
    const handled = () =>
      [...handler.output().matchAll(/^message\.created \S+ (\{.*\})$/gm)].map((m) =>
        JSON.parse(m[1]).id as string
      );
    const { posted } = await forwardAcrossADrop(
      (args) => [Deno.execPath(), ["run", "--allow-net", "--allow-env", FORWARDER, ...args]],
      `http://127.0.0.1:${port}/`,
      handled,
    );
    assert.deepEqual(handled(), posted);
    assert.doesNotMatch(handler.output(), /bad signature/);
  } finally {
    await handler.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("stream forward (Node): a Standard Webhooks verifier accepts every event, sent once, in order", async () => {
  const hook = new Webhook(SECRET);
  const r = receiver((n) => {
    // Throws (so the answer is a 500, and the event comes again) unless the signature is valid.
    hook.verify(r.hits[n].body, Object.fromEntries(r.hits[n].headers));
    return new Response(null, { status: 204 });
  });
  const verified = () => r.hits.map((h) => JSON.parse(h.body).data.id as string);
  try {
    const { posted, output } = await forwardAcrossADrop(
      (args) => ["node", [FORWARDER, ...args]],
      r.url,
      verified,
    );
    assert.deepEqual(verified(), posted);
    assert.equal(output.match(/→ 204/g)?.length, 40);
  } finally {
    await r.close();
  }
});
