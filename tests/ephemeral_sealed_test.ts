/**
 * Ephemeral messages are never stored (decisions.md, "Ephemeral messages"): on their way to the
 * instance holding their person's stream, what they say is sealed under APP_KEY, so neither the
 * store's file nor its WAL holds it in the clear, and a backup taken in that minute holds no
 * trace of it (issue 52, item 4).
 */
import assert from "node:assert/strict";
import { backupUnsupported } from "../kv/store/store_file.ts";
import { keys } from "../kv/keys.ts";
import { workspace } from "./harness.ts";
import { cli, sharedStore, startService } from "./processes.ts";
import { connect, type StreamClient } from "./sse_client.ts";
import { waitUntil } from "./webhook_receivers.ts";

const holds = async (file: string, text: string) => {
  const bytes = await Deno.readFile(file).catch(() => new Uint8Array());
  return new TextDecoder("latin1").decode(bytes).includes(text);
};

Deno.test("an ephemeral message is sealed in the store and left out of backups", async () => {
  const store = await sharedStore();
  const service = await startService(store.env);
  const dir = await Deno.makeTempDir({ prefix: "sealed-" });
  let reader: StreamClient | null = null;
  try {
    const w = await workspace(store.ctx);
    const general = w.team.general_channel_id;
    const whisper = `whisper-${crypto.randomUUID()}`;
    const stream = await connect(`${service.url}/api/v1/events/stream`, w.member.token);
    reader = stream;
    const res = await fetch(`${service.url}/api/slack/chat.postEphemeral`, {
      method: "POST",
      headers: { Authorization: `Bearer ${w.admin.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ channel: general, user: w.member.user.id, text: whisper }),
    });
    assert.equal((await res.json()).ok, true);
    // It still reaches its person's stream, through the store, unsealed.
    await waitUntil(
      () =>
        stream.events.some((e) =>
          e.event === "message.ephemeral" && JSON.stringify(e.data).includes(whisper)
        ),
      10_000,
      "the ephemeral message on its person's stream",
    );
    // Read as a message is: a person by name, not by id.
    const named = await fetch(`${service.url}/api/slack/chat.postEphemeral`, {
      method: "POST",
      headers: { Authorization: `Bearer ${w.admin.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        channel: general,
        user: w.member.user.id,
        text: `<@${w.admin.user.id}> shipped it &amp; left`,
      }),
    });
    assert.equal((await named.json()).ok, true);
    await waitUntil(
      () =>
        stream.events.some((e) =>
          e.event === "message.ephemeral" &&
          (e.data as { text: string }).text === "@Ada Admin shipped it & left"
        ),
      10_000,
      "the ephemeral message's text, names and all",
    );
    const relayed = await Array.fromAsync(store.ctx.kv.list({ prefix: ["sealed_notices"] }));
    assert.equal(relayed.length, 2, "both relayed through the store");
    const file = store.env.KV_PATH;
    assert.equal(await holds(file, whisper), false, "the store's file holds the text");
    assert.equal(await holds(`${file}-wal`, whisper), false, "the WAL holds the text");

    const unsupported = backupUnsupported();
    if (unsupported) {
      console.log(`backup part skipped: ${unsupported}`);
      return;
    }
    const backup = `${dir}/copy.sqlite3`;
    await cli(store.env, "backup", "--to", backup);
    assert.equal(await holds(backup, whisper), false, "the backup holds the text");
    const copy = await Deno.openKv(backup);
    try {
      const left = await Array.fromAsync(copy.list({ prefix: keys.sealedNotices(w.team.id) }));
      assert.deepEqual(left, [], "the backup holds the sealed notice");
    } finally {
      copy.close();
    }
  } finally {
    await reader?.close();
    await service.kill();
    await store.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});
