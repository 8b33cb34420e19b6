/**
 * What a backup or export killed part way leaves (issue 52, item 7): its work files (the export's
 * copy of the store, which holds every message, and the partial file) are made beside the target,
 * hidden and private, never in $TMPDIR; and the next backup, export or start of the service
 * removes those whose process is gone, keeping those of a process still at work.
 */
import assert from "node:assert/strict";
import { backupUnsupported } from "../kv/store/store_file.ts";
import { workspace } from "./harness.ts";
import { cli, freePort, sharedStore, startService, watch } from "./processes.ts";
import { waitUntil } from "./webhook_receivers.ts";

const unsupported = backupUnsupported();
const ADMIN = new URL("../cli/admin.ts", import.meta.url).pathname;
const MAIN = new URL("../main.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;

const hidden = async (folder: string) =>
  (await Array.fromAsync(Deno.readDir(folder))).map((e) => e.name).filter((n) => n.startsWith("."))
    .sort();

/** A pid no process has: one that just ended. */
async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

Deno.test({
  name:
    `work files: a killed export's copy is beside its target, and the next backup or start removes what the dead left${
      unsupported ? ` (skipped: ${unsupported})` : ""
    }`,
  ignore: unsupported !== null,
  async fn() {
    const store = await sharedStore();
    const out = await Deno.makeTempDir({ prefix: "work-files-" });
    const tmp = await Deno.makeTempDir({ prefix: "work-tmp-" });
    try {
      // A service starts on the store first, as it always has before the CLI works on it.
      await (await startService(store.env)).kill();
      const w = await workspace(store.ctx);
      // Enough to make an export take a moment: its copy is seen before it ends.
      const big = "x".repeat(8_000);
      for (let i = 0; i < 1_000; i += 50) {
        const op = store.ctx.kv.atomic();
        for (let j = i; j < i + 50; j++) {
          op.set(["messages", w.team.general_channel_id, `m${j}`], { body: big });
        }
        await op.commit();
      }
      const exporting = watch(
        Deno.execPath(),
        ["run", "--allow-all", ADMIN, "export", "--to", `${out}/moved.jsonl`],
        { ...store.env, TMPDIR: tmp },
      );
      await waitUntil(
        async () => (await hidden(out)).some((n) => /\.copy-\d+-/.test(n)),
        20_000,
        "the export's copy beside its target",
      ).catch(async (e) => {
        await exporting.kill();
        throw new Error(`${e.message}: ${exporting.output()}`);
      });
      await exporting.kill();
      const left = await hidden(out);
      const copy = left.find((n) => /\.(?:copy|partial)-\d+-[0-9a-f]{8}$/.test(n));
      assert.ok(copy?.includes(".moved.jsonl.copy-"), `${left}`);
      assert.equal((await Deno.stat(`${out}/${copy}`)).mode! & 0o777, 0o600);
      assert.deepEqual(await hidden(tmp), [], "nothing in TMPDIR");
      assert.deepEqual([...Deno.readDirSync(tmp)], [], "nothing in TMPDIR");

      // A partial backup a dead process left beside the store, and one of a live process.
      const storeFolder = store.env.KV_PATH.replace(/\/[^/]*$/, "");
      const dead = `.b.sqlite3.partial-${await deadPid()}-0123abcd`;
      const live = `.b.sqlite3.partial-${Deno.pid}-89abcdef`;
      for (const name of [dead, live]) await Deno.writeTextFile(`${storeFolder}/${name}`, "x");

      await cli(store.env, "backup", "--to", `${out}/b.sqlite3`);
      assert.deepEqual(await hidden(out), [], "the dead export's files are gone");
      assert.deepEqual(await hidden(storeFolder), [live], "the dead backup's partial is gone");

      // The service's start clears what it finds beside the store too, with the permissions
      // `deno task start` gives it (no /proc): a copy some process holds open stays.
      await Deno.writeTextFile(`${storeFolder}/${dead}`, "x");
      const held = `.moved.jsonl.copy-${Deno.pid}-fedcba98`;
      const holder = await Deno.openKv(`${storeFolder}/${held}`);
      try {
        await holder.set(["k"], 1);
        const service = watch(Deno.execPath(), [
          "run",
          "--allow-net",
          "--allow-env",
          "--allow-read",
          "--allow-write",
          "--config",
          CONFIG,
          MAIN,
        ], { ...store.env, PORT: String(freePort()) });
        await waitUntil(() => service.output().includes("Listening on"), 20_000, "the service")
          .finally(() => service.kill());
        const kept = await hidden(storeFolder);
        assert.ok(!kept.includes(dead), `${kept}`);
        assert.ok(kept.includes(held) && kept.includes(live), `${kept}`);
      } finally {
        holder.close();
      }
    } finally {
      await store.cleanup();
      await Deno.remove(out, { recursive: true });
      await Deno.remove(tmp, { recursive: true });
    }
  },
});
