/**
 * The receiver the README tells integrators to write, examples/receiver.ts, shown in README.md
 * as it stands and run as its own process: it must accept real deliveries and handle a
 * redelivered event only once.
 */
import assert from "node:assert/strict";
import { api, startServer, workspace } from "./harness.ts";
import { freePort, startExampleReceiver, type Watched } from "./processes.ts";
import { post, show, subscribe, waitUntil } from "./webhook_receivers.ts";

const README = new URL("../README.md", import.meta.url);

/** The first ```ts block under the README's "Verifying webhook signatures" heading. */
async function readmeReceiver(): Promise<string> {
  const text = await Deno.readTextFile(README);
  const section = text.indexOf("### Verifying webhook signatures");
  const start = text.indexOf("```ts\n", section) + "```ts\n".length;
  return text.slice(start, text.indexOf("```", start));
}

const EXAMPLE = new URL("../examples/receiver.ts", import.meta.url);

Deno.test("readme: the README shows examples/receiver.ts as it is", async () => {
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
