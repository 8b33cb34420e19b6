/**
 * What readers that stop reading can hold of the service (decisions.md, "Under concurrency too":
 * a stream the service ends releases its connection): the service cuts them off, counts each
 * connection until the runtime lets go of it, and holds at most MAX_STREAMS_PER_USER of one
 * user's however many tokens it has. Counted with `ss`, on a real service process.
 */
import assert from "node:assert/strict";
import { createToken } from "../domain/people/tokens.ts";
import { MAX_STREAMS_PER_TOKEN, MAX_STREAMS_PER_USER } from "../domain/stream/registrations.ts";
import { sharedStore, startService } from "./processes.ts";
import { workspace } from "./harness.ts";
import { waitUntil } from "./webhook_receivers.ts";

/** How many of the readers' connections the service holds open, as the kernel lists them. */
async function established(port: number, readers: Set<number>): Promise<number> {
  const out = await new Deno.Command("ss", {
    args: ["-Htn", "state", "established", `( sport = :${port} )`],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .map((line) => Number(/:(\d+)\s*$/.exec(line.trim())?.[1]))
    .filter((peer) => readers.has(peer)).length;
}

/** Opens a stream over a bare socket and never reads past the status line: a stalled reader. */
async function stalledReader(port: number, token: string) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const request = `GET /api/v1/events/stream HTTP/1.1\r\nHost: x\r\n` +
    `Authorization: Bearer ${token}\r\n\r\n`;
  await conn.write(new TextEncoder().encode(request));
  const head = new Uint8Array(12);
  let got = 0;
  while (got < 12) got += (await conn.read(head.subarray(got))) ?? 12;
  return { status: Number(new TextDecoder().decode(head).slice(9, 12)), conn };
}

const hasSs = await new Deno.Command("ss", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((o) => o.success, () => false);

Deno.test({
  name: "stream connections: one user's stalled readers hold at most its cap, however many tokens",
  ignore: !hasSs,
  async fn() {
    const store = await sharedStore();
    const service = await startService(store.env);
    const port = Number(new URL(service.url).port);
    const readers: Deno.Conn[] = [];
    const ports = new Set<number>();
    try {
      const w = await workspace(store.ctx);
      const tokens: string[] = [];
      for (let i = 0; i < 3; i++) {
        const made = await createToken(store.ctx, w.member.user, {
          scopes: ["messages:read"],
          actor: null,
        });
        tokens.push(made.value);
      }
      const statuses: number[] = [];
      for (const token of tokens) {
        for (let i = 0; i < MAX_STREAMS_PER_TOKEN; i++) {
          const r = await stalledReader(port, token);
          statuses.push(r.status);
          ports.add((r.conn.localAddr as Deno.NetAddr).port);
          if (r.status === 200) readers.push(r.conn);
          else r.conn.close();
        }
      }
      const accepted = statuses.filter((s) => s === 200).length;
      assert.equal(accepted, MAX_STREAMS_PER_USER, JSON.stringify(statuses));
      assert.deepEqual(statuses.filter((s) => s !== 200 && s !== 429), []);

      // Enough to fill every reader's socket and its unread allowance: they are cut off.
      const body = "x".repeat(9_000);
      const post = () =>
        fetch(`${service.url}/api/v1/channels/${w.team.general_channel_id}/messages`, {
          method: "POST",
          headers: { Authorization: `Bearer ${w.admin.token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ body }),
        }).then((r) => r.body?.cancel());
      await waitUntil(
        async () => {
          await Promise.all(Array.from({ length: 50 }, post));
          return /too slow was cut off/.test(service.output());
        },
        60_000,
        "the stalled readers to be cut off",
      );
      const held = await established(port, ports);
      console.log(`stream connections: ${held} held by the service after the cut-off`);
      assert.ok(held <= MAX_STREAMS_PER_USER, `${held} connections held`);
      // Held connections still count: no token of the user gets another stream meanwhile.
      const more = await stalledReader(port, tokens[0]);
      more.conn.close();
      assert.equal(more.status, 429);

      // Once the readers go, the service lets go of every connection and counts them no more.
      for (const c of readers.splice(0)) c.close();
      await waitUntil(
        async () => await established(port, ports) === 0,
        10_000,
        "connections released",
      );
      await waitUntil(
        async () => {
          const again = await stalledReader(port, tokens[1]);
          again.conn.close();
          return again.status === 200;
        },
        20_000,
        "a new stream after the old ones were released",
      );
    } finally {
      for (const c of readers) c.close();
      await service.kill();
      await store.cleanup();
    }
  },
});
