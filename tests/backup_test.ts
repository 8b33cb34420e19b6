/**
 * Backups of a local store (decisions.md, "Data over time"; issue 28 finding 1): `admin backup`
 * copies the store as of one instant while two instances and the CLI write to it, and the copy
 * opens under the same APP_KEY with everything acknowledged before it began; `admin restore`
 * checks a file before it replaces the store, keeps the store it replaced, and refuses, in one
 * line and changing nothing, while anything has the store open. A plain copy of a live store is
 * what this replaces: it can be torn.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { generateAppKey } from "../core/keyring.ts";
import { keys } from "../kv/keys.ts";
import { backupUnsupported, integrityOf } from "../kv/store/store_file.ts";
import { api, assertStatus, workspace } from "./harness.ts";
import { cli, cliRun, sharedStore, startService } from "./processes.ts";
import { sleep } from "./webhook_receivers.ts";
import { showEphemeral } from "../domain/messages/ephemeral.ts";

const unsupported = backupUnsupported();
const test = (name: string, fn: () => Promise<void>) =>
  Deno.test({
    name: unsupported ? `${name} (skipped: ${unsupported})` : name,
    ignore: unsupported !== null,
    fn,
  });

async function postTo(url: string, token: string, channel: string, body: string) {
  const res = await fetch(`${url}/api/v1/channels/${channel}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ body }),
  });
  if (res.status !== 201) throw new Error(`post: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()).data.id as string;
}

test("backup: taken while two instances and the CLI write, it holds every post acknowledged before it", async () => {
  const store = await sharedStore();
  const [a, b] = [await startService(store.env), await startService(store.env)];
  const dir = await Deno.makeTempDir({ prefix: "backup-" });
  try {
    const w = await workspace(store.ctx);
    const general = w.team.general_channel_id;
    const acked: { id: string; at: number }[] = [];
    let posting = true;
    const poster = async (url: string) => {
      for (let n = 0; posting; n++) {
        const id = await postTo(url, w.admin.token, general, `post ${n}`);
        acked.push({ id, at: Date.now() });
      }
    };
    const cliWriter = async () => {
      while (posting) {
        await cli(store.env, "token:create", "--user", w.bot.user.id, "--scopes", "all");
      }
    };
    const writers = Promise.all([poster(a.url), poster(b.url), poster(a.url), cliWriter()])
      .catch((e) => {
        throw new Error(`${e}\n--- a:\n${a.output()}\n--- b:\n${b.output()}`);
      });
    await sleep(1_500);
    const file = `${dir}/backup.sqlite3`;
    const taken = await cli(store.env, "backup", "--to", file);
    const returned = Date.now();
    await sleep(500);
    posting = false;
    await writers;

    assert.equal(taken.file, file);
    assert.equal(taken.bytes, (await Deno.stat(file)).size);
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600, "readable by its owner only");
    const before = acked.filter((p) => p.at < Date.parse(taken.taken_at));
    // Acknowledged once the backup had returned: committed after its one transaction ended.
    const after = acked.filter((p) => p.at > returned);
    assert.ok(
      before.length > 50 && after.length > 0,
      `${before.length} before, ${after.length} after`,
    );
    assert.equal(integrityOf(file), "ok");
    const db = new DatabaseSync(file, { readOnly: true });
    const free = db.prepare("PRAGMA freelist_count").get() as { freelist_count: number };
    db.close();
    assert.equal(free.freelist_count, 0, "compact: no free pages");

    const copy = await Deno.openKv(file);
    try {
      const found = await Promise.all(before.map((p) => copy.get(keys.message(p.id))));
      assert.equal(found.filter((e) => e.value === null).length, 0, "acknowledged before it began");
      const later = await Promise.all(after.map((p) => copy.get(keys.message(p.id))));
      assert.equal(later.filter((e) => e.value !== null).length, 0, "and nothing after it");
    } finally {
      copy.close();
    }
    // A service opens it under the same APP_KEY and serves what it holds.
    const served = await startService({ ...store.env, KV_PATH: file });
    try {
      const res = await fetch(`${served.url}/api/v1/channels/${general}/messages/${before[0].id}`, {
        headers: { Authorization: `Bearer ${w.admin.token}` },
      });
      assert.equal(res.status, 200);
    } finally {
      await served.kill();
    }
  } finally {
    await a.kill();
    await b.kill();
    await store.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

test("restore: checks the file, refuses while the store is open, keeps the store it replaces", async () => {
  const store = await sharedStore();
  const dir = await Deno.makeTempDir({ prefix: "restore-" });
  const service = await startService(store.env);
  try {
    const w = await workspace(store.ctx);
    const s = store.as(service);
    const general = w.team.general_channel_id;
    const kept = await postTo(service.url, w.admin.token, general, "in the backup");
    const file = `${dir}/backup.sqlite3`;
    await cli(store.env, "backup", "--to", file);
    const lost = await postTo(service.url, w.admin.token, general, "after the backup");

    const refused = async (args: string[], env = store.env) => {
      const out = await cliRun(env, "restore", ...args);
      assert.equal(out.code, 1, out.stdout);
      assert.equal(out.stderr.trim().split("\n").length, 1, `one line: ${out.stderr}`);
      return out.stderr;
    };
    assert.match(await refused(["--from", file]), /is open .*stop them all first/);
    assert.match(
      await refused(["--from", file], { ...store.env, APP_KEY: generateAppKey() }),
      /another APP_KEY/,
    );
    const torn = `${dir}/torn.sqlite3`;
    const bytes = await Deno.readFile(file);
    await Deno.writeFile(torn, bytes.slice(0, Math.floor(bytes.length / 2)));
    assert.match(await refused(["--from", torn]), /integrity check|not a backup/);
    assert.match(await refused(["--from", `${dir}/missing`]), /no file/);
    // An SQLite database with a table named kv of its own is not a store either.
    const lookalike = `${dir}/lookalike.sqlite3`;
    const other = new DatabaseSync(lookalike);
    other.exec("CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB)");
    other.close();
    assert.match(await refused(["--from", lookalike]), /without Deno KV's tables/);
    assert.match(await refused(["--from", dir]), /is not a file|is a folder/);
    assertStatus(
      await api(s, "GET", `/channels/${general}/messages/${lost}`, { token: w.admin.token }),
      200,
      "nothing was changed",
    );

    await service.stop("SIGTERM");
    store.ctx.kv.close();
    const restored = await cli(store.env, "restore", "--from", file);
    assert.equal(restored.restored_from, file);
    assert.ok((await Deno.stat(restored.replaced_kept_as)).isFile, "the replaced store is kept");
    const folder = store.env.KV_PATH.replace(/\/kv\.sqlite3$/, "");
    const strays = [...Deno.readDirSync(folder)].map((e) => e.name)
      .filter((n) => n.startsWith("kv.sqlite3.replaced-") && n.endsWith("-shm"));
    assert.deepEqual(strays, [], "no -shm beside the replaced store");
    const again = await startService(store.env);
    try {
      const get = (id: string) =>
        fetch(`${again.url}/api/v1/channels/${general}/messages/${id}`, {
          headers: { Authorization: `Bearer ${w.admin.token}` },
        }).then(async (r) => (await r.body?.cancel(), r.status));
      assert.equal(await get(kept), 200);
      assert.equal(await get(lost), 404, "the store is the backup's");
    } finally {
      await again.kill();
    }
  } finally {
    await service.kill();
    await Deno.remove(store.env.KV_PATH.replace(/\/kv\.sqlite3$/, ""), { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("backup and restore: a store that is not a local file says so in one line, pointing to export", async () => {
  const env = { KV_PATH: "https://kv.example.com/v2/db", APP_KEY: generateAppKey() };
  for (const args of [["backup", "--to", "/tmp/x"], ["restore", "--from", "/tmp/x"]]) {
    const out = await cliRun(env, ...args);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /KV_PATH is not a local file.*export/);
    assert.equal(out.stderr.trim().split("\n").length, 1);
  }
});

test("restore: refuses anything that isn't this service's store, in one line, changing nothing", async () => {
  const store = await sharedStore();
  const dir = await Deno.makeTempDir({ prefix: "restore-foreign-" });
  const service = await startService(store.env);
  try {
    const w = await workspace(store.ctx);
    const general = w.team.general_channel_id;
    await postTo(service.url, w.admin.token, general, "still here");
    await service.stop("SIGTERM");
    store.ctx.kv.close();
    const empty = `${dir}/empty.sqlite3`;
    await Deno.writeFile(empty, new Uint8Array());
    const foreign = `${dir}/foreign.sqlite3`;
    const db = new DatabaseSync(foreign);
    db.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('not a store')");
    db.close();
    const bareKv = `${dir}/bare-kv.sqlite3`;
    const other = await Deno.openKv(bareKv);
    await other.set(["someone else's"], "record");
    other.close();
    const text = `${dir}/notes.txt`;
    await Deno.writeTextFile(text, "hello\n");
    const unreadable = `${dir}/unreadable.sqlite3`;
    await Deno.copyFile(foreign, unreadable);
    await Deno.chmod(unreadable, 0o000);
    const cases: [string, RegExp][] = [
      [empty, /is empty \(0 bytes\).*not a backup/],
      [foreign, /without Deno KV's tables/],
      [bareKv, /not one this service ran on/],
      [text, /not a readable SQLite database/],
      ["/dev/null", /not a file|empty/],
    ];
    // Root reads any file: the permission case holds only for other users.
    if (Deno.uid() !== 0) cases.push([unreadable, /can't read .*permission denied/]);
    const before = (await Deno.stat(store.env.KV_PATH)).mtime?.getTime();
    for (const [file, why] of cases) {
      const out = await cliRun(store.env, "restore", "--from", file);
      assert.equal(out.code, 1, `${file}: ${out.stdout}`);
      assert.equal(out.stderr.trim().split("\n").length, 1, `one line: ${out.stderr}`);
      assert.match(out.stderr, why, file);
    }
    assert.equal((await Deno.stat(store.env.KV_PATH)).mtime?.getTime(), before);
    const again = await startService(store.env);
    try {
      const res = await fetch(`${again.url}/api/v1/channels/${general}/messages`, {
        headers: { Authorization: `Bearer ${w.admin.token}` },
      });
      assert.match(await res.text(), /still here/, "the store is as it was");
    } finally {
      await again.kill();
    }
  } finally {
    await service.kill();
    await Deno.remove(store.env.KV_PATH.replace(/\/kv\.sqlite3$/, ""), { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

test("backup: one killed part way leaves no file under the backup's name", async () => {
  const store = await sharedStore();
  const service = await startService(store.env);
  const dir = await Deno.makeTempDir({ prefix: "backup-killed-" });
  try {
    await workspace(store.ctx);
    await service.stop("SIGTERM");
    store.ctx.kv.close();
    // Bulk beside the store's tables, so that copying takes long enough to be cut short.
    const db = new DatabaseSync(store.env.KV_PATH);
    db.exec("CREATE TABLE bulk (b BLOB)");
    const insert = db.prepare("INSERT INTO bulk VALUES (randomblob(1048576))");
    for (let i = 0; i < 300; i++) insert.run();
    db.close();
    const file = `${dir}/kv-backup.sqlite3`;
    const root = new URL("..", import.meta.url).pathname;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "cli/admin.ts", "backup", "--to", file],
      cwd: root,
      env: store.env,
      stdout: "null",
      stderr: "null",
    }).spawn();
    // Killed once the copy has begun: its partial file exists.
    const started = Date.now();
    while (Date.now() - started < 30_000) {
      const names = [...Deno.readDirSync(dir)].map((e) => e.name);
      if (names.some((n) => n.includes(".partial-"))) break;
      await sleep(5);
    }
    child.kill("SIGKILL");
    await child.status;
    await assert.rejects(Deno.stat(file), Deno.errors.NotFound, "a partial backup bears its name");
  } finally {
    await service.kill();
    await Deno.remove(store.env.KV_PATH.replace(/\/kv\.sqlite3$/, ""), { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

test("delete: a backup or export taken after it holds the deleted text nowhere", async () => {
  const store = await sharedStore();
  const service = await startService(store.env);
  const dir = await Deno.makeTempDir({ prefix: "erased-" });
  try {
    const w = await workspace(store.ctx);
    const general = w.team.general_channel_id;
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${service.url}/api/v1/channels/${general}/messages${path}`, {
        method,
        headers: { Authorization: `Bearer ${w.admin.token}`, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }));
    const secrets: string[] = [];
    for (const older of [false, true]) {
      const secret = `launch code ${crypto.randomUUID()}`;
      secrets.push(secret);
      const posted = await call("POST", "", { body: secret });
      const id = posted.body.data.id;
      assert.equal((await call("PATCH", `/${id}`, { body: `edited ${secret}` })).status, 200);
      if (older) {
        // Events an older release wrote have no index: found near the message's times instead.
        for await (const e of store.ctx.kv.list({ prefix: keys.messageEvents(id) })) {
          await store.ctx.kv.delete(e.key);
        }
      }
      assert.equal((await call("DELETE", `/${id}`)).status, 204);
    }
    const backup = `${dir}/after.sqlite3`;
    await cli(store.env, "backup", "--to", backup);
    const exported = `${dir}/after.jsonl`;
    await cli(store.env, "export", "--to", exported);
    const text = new TextDecoder("latin1");
    for (const file of [backup, exported]) {
      const bytes = text.decode(await Deno.readFile(file));
      for (const secret of secrets) {
        assert.ok(!bytes.includes(secret), `${file} holds the deleted text`);
      }
    }
    assert.equal(integrityOf(backup), "ok");
  } finally {
    await service.kill();
    await store.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

test("backup: a pressable ephemeral message and what expired leave no byte in it", async () => {
  const store = await sharedStore();
  const dir = await Deno.makeTempDir({ prefix: "no-leftovers-" });
  try {
    const w = await workspace(store.ctx);
    // Large enough to spill into SQLite's overflow pages, which a deletion does not zero.
    const button = (i: number) => ({
      type: "actions",
      block_id: `b${i}`,
      elements: [{ type: "button", action_id: `a${i}`, text: { type: "plain_text", text: "Go" } }],
    });
    const shown = await showEphemeral(store.ctx, {
      userId: w.member.user.id,
      teamId: w.team.id,
      ephemeral: {
        channel_id: w.team.general_channel_id,
        text: `press ${"me ".repeat(3000)}`,
        blocks: Array.from({ length: 20 }, (_, i) => button(i)),
        app_id: crypto.randomUUID(),
      },
      from: { appId: crypto.randomUUID(), botId: w.bot.user.id },
    });
    const sealed = await store.ctx.kv.get(keys.pressableEphemeral(shown.id!));
    const traces = [shown.id!, JSON.stringify(sealed.value).slice(200, 260)];
    const lapsed = `lapsed-${crypto.randomUUID()}`;
    await store.ctx.kv.set(["sessions", lapsed], { lapsed }, { expireIn: 1 });
    await sleep(20);
    const backup = `${dir}/copy.sqlite3`;
    await cli(store.env, "backup", "--to", backup);
    const bytes = new TextDecoder("latin1").decode(await Deno.readFile(backup));
    for (const trace of [...traces, lapsed]) {
      assert.ok(!bytes.includes(trace), `the backup holds ${trace}`);
    }
    assert.equal(integrityOf(backup), "ok");
  } finally {
    await store.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});
