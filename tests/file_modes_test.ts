/**
 * The store's files are the service's alone (decisions.md, "Authority over time"; issue 29
 * finding 4): the data folder the service makes is 0700; the store, its -wal and -shm, the
 * writers' lock and app.key are 0600, and a store left with looser modes is tightened at start.
 */
import assert from "node:assert/strict";
import { flushLog } from "../core/log.ts";
import { loadSettings } from "../core/settings.ts";
import { loadKeyring } from "../domain/data/app_key.ts";
import { openStore, turnsFile } from "../kv/store/open.ts";

const modeOf = async (path: string) => (await Deno.stat(path)).mode! & 0o777;

async function storeFiles(path: string) {
  const out: Record<string, number> = {};
  for (const f of await storeFilesPresent(path)) {
    out[f.slice(f.lastIndexOf("/") + 1)] = await modeOf(f);
  }
  return out;
}

/** The store's files that exist now (SQLite removes -wal and -shm when the last one closes). */
async function storeFilesPresent(path: string) {
  const files = [path, `${path}-wal`, `${path}-shm`, turnsFile(path)];
  return (await Promise.all(files.map(async (f) => await Deno.stat(f).then(() => f, () => null))))
    .filter((f): f is string => f !== null);
}

Deno.test("file modes: the folder the service makes is 0700, every file of the store 0600", async () => {
  const dir = await Deno.makeTempDir();
  const cwd = Deno.cwd();
  Deno.chdir(dir);
  try {
    const settings = loadSettings({});
    const kv = await openStore(settings);
    const keyring = await loadKeyring(settings, kv);
    await kv.set(["written"], await keyring.encrypt("x"));
    assert.equal(await modeOf(`${dir}/data`), 0o700);
    assert.deepEqual(await storeFiles(`${dir}/data/kv.sqlite3`), {
      "kv.sqlite3": 0o600,
      "kv.sqlite3-wal": 0o600,
      "kv.sqlite3-shm": 0o600,
      "kv.sqlite3-writer.lock": 0o600,
    });
    assert.equal(await modeOf(`${dir}/data/app.key`), 0o600);
    kv.close();
  } finally {
    Deno.chdir(cwd);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("file modes: a store left readable by others is made private at start", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/kv.sqlite3`;
    const first = await Deno.openKv(path);
    await first.set(["made"], "by an older release");
    await Deno.writeTextFile(`${dir}/app.key`, `${btoa("k".repeat(32))}\n`, { mode: 0o644 });
    await Deno.chmod(`${dir}/app.key`, 0o644);
    for (const f of [path, `${path}-wal`, `${path}-shm`]) await Deno.chmod(f, 0o644);
    const made = await storeFilesPresent(path);
    first.close();
    const settings = loadSettings({ KV_PATH: path });
    const kv = await openStore(settings);
    await loadKeyring(settings, kv);
    const modes = await storeFiles(path);
    assert.ok(made.length >= 1);
    assert.ok(Object.values(modes).every((m) => m === 0o600), JSON.stringify(modes));
    assert.equal(await modeOf(`${dir}/app.key`), 0o600);
    kv.close();
    flushLog(); // the upgrade's log line, written in a moment otherwise
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
