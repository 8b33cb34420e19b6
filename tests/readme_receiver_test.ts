/**
 * The receiver the docs tell integrators to write, examples/receiver.ts, shown in
 * docs/verifying-webhooks.md
 * as it stands and run as its own process: it must accept real deliveries and handle a
 * redelivered event only once.
 */
import assert from "node:assert/strict";
import { api, startServer, workspace } from "./harness.ts";
import {
  EXAMPLE_RECEIVER_ARGS,
  freePort,
  startExampleReceiver,
  type Watched,
} from "./processes.ts";
import { post, show, subscribe, waitUntil } from "./webhook_receivers.ts";

const PAGE = new URL("../docs/verifying-webhooks.md", import.meta.url);

/** The first ```ts block of docs/verifying-webhooks.md, the page the README sends integrators to. */
async function readmeReceiver(): Promise<string> {
  const text = await Deno.readTextFile(PAGE);
  const section = text.indexOf("# Verifying webhook signatures");
  const start = text.indexOf("```ts\n", section) + "```ts\n".length;
  return text.slice(start, text.indexOf("```", start));
}

const EXAMPLE = new URL("../examples/receiver.ts", import.meta.url);

Deno.test("readme: the docs show examples/receiver.ts as it is", async () => {
  assert.equal(await readmeReceiver(), await Deno.readTextFile(EXAMPLE));
});

Deno.test("readme: the README's receiver verifies real deliveries and de-duplicates", async () => {
  const dir = await Deno.makeTempDir({ prefix: "readme-receiver-" });
  const s = await startServer({}, { engine: true });
  const port = freePort();
  let child: Watched | undefined;
  try {
    const w = await workspace(s.ctx);
    const { id, secret } = await subscribe(s, w.admin.token, `http://127.0.0.1:${port}/`);
    child = startExampleReceiver(secret, port, dir);
    const { output } = child;
    await waitUntil(() => output().includes("Listening on"), 20_000, "the receiver to listen");
    // The README's readiness probe (a GET) is answered, and no refusal is logged for it.
    const probe = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal([probe.status, await probe.text()].join(" "), "200 ready\n");

    const message = await post(s, w.admin.token, w.team.general_channel_id, "Hello, receiver");
    await waitUntil(() => output().includes(message.id), 5_000, "the receiver to handle it");
    // The receiver answers before the service records the attempt: wait for the record.
    await waitUntil(
      async () => (await show(s, w.admin.token, id)).deliveries.length === 1,
      5_000,
      "the delivery to be recorded",
    );
    const [delivery] = (await show(s, w.admin.token, id)).deliveries;
    assert.equal(delivery.succeeded, true, JSON.stringify(delivery));
    assert.equal(delivery.response_status, 204);

    const again = await api(s, "POST", `/webhooks/${id}/deliveries/${delivery.id}/redeliver`, {
      token: w.admin.token,
    });
    assert.equal(again.status, 202);
    await waitUntil(
      async () => (await show(s, w.admin.token, id)).deliveries.length === 2,
      5_000,
      "the redelivery to be recorded",
    );
    const [redelivered] = (await show(s, w.admin.token, id)).deliveries;
    assert.equal(redelivered.succeeded, true, "a repeat is acknowledged");
    assert.equal(output().split(delivery.event_id).length - 1, 1, "and handled only once");
    assert.doesNotMatch(output(), /refused/, "nothing was refused");

    child.child.kill("SIGTERM");
    await child.child.status;
    await child.drained;
    child = undefined;
  } finally {
    await child?.kill();
    await s.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/** Runs the example receiver with `env` until it exits; its code and what it printed. */
async function receiverExit(env: Record<string, string>) {
  const dir = await Deno.makeTempDir({ prefix: "readme-receiver-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: EXAMPLE_RECEIVER_ARGS,
      env: { SEEN_KV_PATH: `${dir}/seen.sqlite3`, RECEIVER_PORT: String(freePort()), ...env },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr).trim() };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("readme: the receiver says in one line what to set when its secret is missing or wrong", async () => {
  const missing = await receiverExit({});
  assert.equal(missing.code, 1);
  assert.match(
    missing.stderr,
    /^WEBHOOK_SECRET is not set: set it to the subscription's signing secret/,
  );
  assert.equal(missing.stderr.split("\n").length, 1, "one line");
  // "null" is what a failed `jq -r` hands over.
  for (const value of ["null", "secret", "whsec_"]) {
    const wrong = await receiverExit({ WEBHOOK_SECRET: value });
    assert.equal(wrong.code, 1, value);
    assert.match(wrong.stderr, /^WEBHOOK_SECRET is not a signing secret/, value);
    assert.equal(wrong.stderr.split("\n").length, 1, "one line");
  }
});

Deno.test("readme: the receiver says why it refuses a delivery", async () => {
  const dir = await Deno.makeTempDir({ prefix: "readme-receiver-" });
  const port = freePort();
  const child = startExampleReceiver("whsec_localdevelopmentsecret0000000000", port, dir);
  try {
    await waitUntil(
      () => child.output().includes("Listening on"),
      20_000,
      "the receiver to listen",
    );
    const url = `http://127.0.0.1:${port}/`;
    const send = async (headers: Record<string, string>) => {
      const res = await fetch(url, { method: "POST", headers, body: '{"id":"x"}' });
      return { status: res.status, text: await res.text() };
    };
    const none = await send({});
    assert.deepEqual(none, { status: 400, text: "no X-Service-Signature header" });
    const now = Math.floor(Date.now() / 1000);
    const stale = await send({ "X-Service-Signature": `t=${now - 600},v1=${"0".repeat(64)}` });
    assert.match(stale.text, /is 60\d s old, more than 300 s/);
    const wrong = await send({ "X-Service-Signature": `t=${now},v1=${"0".repeat(64)}` });
    assert.match(wrong.text, /no v1 signature matches: WEBHOOK_SECRET is not this subscription's/);
    await waitUntil(
      () => child.output().split("refused a delivery: ").length === 4,
      5_000,
      "a line for each",
    );
  } finally {
    await child.kill();
    await Deno.remove(dir, { recursive: true });
  }
});
