/**
 * Imports that can't destroy (decisions.md, "Moving a workspace between stores"): a store a
 * service has only started on counts as empty; one that holds a team is refused by name; the whole
 * file is checked (every line, its digest) before anything is written; and an import killed and
 * run again ends with exactly the keys of one run straight through.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { generateAppKey } from "../core/keyring.ts";
import { postMessage } from "../domain/messages/messages.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import { backupUnsupported } from "../kv/store/store_file.ts";
import { workspace } from "./harness.ts";
import {
  cli,
  cliRun,
  releaseCliRun,
  sharedStore,
  startService,
  unpackRelease,
} from "./processes.ts";
import { RELEASES } from "./fixtures/make_fixtures.ts";
import { sleep } from "./webhook_receivers.ts";

const unsupported = backupUnsupported();
const test = (name: string, fn: () => Promise<void>) =>
  Deno.test({
    name: unsupported ? `${name} (skipped: ${unsupported})` : name,
    ignore: unsupported !== null,
    fn,
  });

/** A source store with a workspace of `posts` messages, exported: the env and the file. */
async function exported(posts: number) {
  const source = await sharedStore();
  // A service starts on it first, as on every store: its layout and key check.
  await (await startService(source.env)).kill();
  const w = await workspace(source.ctx);
  const subject = await authenticate(source.ctx, w.admin.token);
  for (let i = 0; i < posts; i++) {
    await postMessage(source.ctx, subject, w.team.general_channel_id, {
      ok: true,
      value: { body: `post ${i}` },
    });
  }
  await source.ctx.kv.settled();
  const dir = await Deno.makeTempDir({ prefix: "import-safety-" });
  const file = `${dir}/workspace.jsonl`;
  await cli(source.env, "export", "--to", file);
  return {
    source,
    w,
    file,
    dir,
    /** A fresh target's environment under `dir`, with the source's key. */
    target: (name: string) => ({ ...source.env, KV_PATH: `${dir}/${name}/kv.sqlite3` }),
    async cleanup() {
      await source.cleanup();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function refused(env: Record<string, string>, file: string): Promise<string> {
  const out = await cliRun(env, "import", "--from", file);
  assert.equal(out.code, 1, out.stdout);
  assert.equal(out.stderr.trim().split("\n").length, 1, `one line: ${out.stderr}`);
  return out.stderr;
}

/** Every key of a store, with the versionstamps the log's keys carry left out. */
async function keysOf(path: string): Promise<string[]> {
  const kv = await Deno.openKv(path);
  try {
    const out: string[] = [];
    for await (const e of kv.list({ prefix: [] })) {
      const key = e.key[0] === "team_stream" ? [e.key[0], e.key[1], e.key[3]] : e.key;
      out.push(JSON.stringify(key, (_, v) => typeof v === "bigint" ? `${v}n` : v));
    }
    return out.sort();
  } finally {
    kv.close();
  }
}

test("import: into a store a service has only started on, then served by it", async () => {
  const x = await exported(5);
  try {
    const env = x.target("deployed");
    await Deno.mkdir(`${x.dir}/deployed`);
    const first = await startService(env);
    await first.kill();
    const imported = await cli(env, "import", "--from", x.file);
    assert.ok(imported.records > 0);
    const again = await startService(env);
    try {
      const res = await fetch(
        `${again.url}/api/v1/channels/${x.w.team.general_channel_id}/messages`,
        {
          headers: { Authorization: `Bearer ${x.w.admin.token}` },
        },
      );
      assert.equal(res.status, 200);
      assert.match(await res.text(), /post 4/);
    } finally {
      await again.kill();
    }
    // A store started with another key: refused, naming the key, before anything is written.
    const other = { ...x.target("other"), APP_KEY: generateAppKey() };
    await Deno.mkdir(`${x.dir}/other`);
    await (await startService(other)).kill();
    assert.match(
      await refused({ ...other, APP_KEY: x.source.env.APP_KEY }, x.file),
      /another APP_KEY/,
    );
    // A store that holds a team: refused, naming it and the way out.
    assert.match(await refused(env, x.file), /holds 1 team \(“Acme”\).*new KV_PATH/);
  } finally {
    await x.cleanup();
  }
});

/** The file's lines with the trailer's plain digest made again over what they now hold. */
function redigested(lines: string[], { unsign = false } = {}): string[] {
  const records = lines.slice(1, -1);
  const trailer = JSON.parse(lines.at(-1)!);
  trailer.sha256 = createHash("sha256").update(records.map((l) => l + "\n").join("")).digest(
    "hex",
  );
  if (unsign) delete trailer.hmac_sha256;
  return [...lines.slice(0, -1), JSON.stringify(trailer)];
}

test("import: a broken or edited line is refused, naming it, before anything is written", async () => {
  const x = await exported(3);
  try {
    const lines = (await Deno.readTextFile(x.file)).trimEnd().split("\n");
    const at = lines.findIndex((l) => l.includes("post 1"));
    assert.ok(at > 0);
    const cases: [string, string[], RegExp][] = [
      ["broken", lines.with(at, lines[at].slice(0, 20)), new RegExp(`line ${at + 1}: not a JSON`)],
      [
        "keyless",
        lines.with(at, '{"value":1}'),
        new RegExp(`line ${at + 1}: a record needs a key`),
      ],
      [
        "edited",
        lines.with(at, lines[at].replace("post 1", "post X")),
        /does not match its digest/,
      ],
      ["short", lines.slice(0, -3), /cut short/],
      // Edited, and its digest computed again, as anyone can: only APP_KEY's signature tells.
      [
        "re-digested",
        redigested(lines.with(at, lines[at].replace("post 1", "post X"))),
        /does not carry this APP_KEY's signature/,
      ],
      [
        "unsigned",
        redigested(lines.with(at, lines[at].replace("post 1", "post X")), { unsign: true }),
        /is not signed/,
      ],
    ];
    for (const [name, content, why] of cases) {
      const file = `${x.dir}/${name}.jsonl`;
      await Deno.writeTextFile(file, content.join("\n") + "\n");
      const env = x.target(name);
      await Deno.mkdir(`${x.dir}/${name}`);
      assert.match(await refused(env, file), why, name);
      assert.deepEqual(
        (await keysOf(env.KV_PATH)).filter((k) => !k.startsWith('["app_key_check"')),
        [],
        `${name}: something was written`,
      );
    }
  } finally {
    await x.cleanup();
  }
});

test("import: killed part way and run again, it ends with the keys of a straight import", async () => {
  const x = await exported(1_500);
  try {
    const straight = x.target("straight");
    await Deno.mkdir(`${x.dir}/straight`);
    await cli(straight, "import", "--from", x.file);

    const resumed = x.target("resumed");
    await Deno.mkdir(`${x.dir}/resumed`);
    const root = new URL("..", import.meta.url).pathname;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "cli/admin.ts", "import", "--from", x.file],
      cwd: root,
      env: resumed,
      stdout: "null",
      stderr: "null",
    }).spawn();
    // Killed once it has written some events (they come last) but not all.
    let watcher: Deno.Kv | null = null;
    for (let events = 0, i = 0; i < 10_000 && events === 0; i++) {
      await sleep(1);
      watcher ??= await Deno.openKv(resumed.KV_PATH).catch(() => null);
      if (!watcher) continue;
      for await (const _ of watcher.list({ prefix: ["events"] }, { limit: 1 })) events++;
    }
    child.kill("SIGKILL");
    await child.status;
    watcher?.close();
    const cut = await keysOf(resumed.KV_PATH);
    assert.ok(cut.length < (await keysOf(straight.KV_PATH)).length, "the import was cut short");
    await cli(resumed, "import", "--from", x.file);
    assert.deepEqual(await keysOf(resumed.KV_PATH), await keysOf(straight.KV_PATH));
  } finally {
    await x.cleanup();
  }
});

test("import: a second import while one runs, even paused, is refused at once, naming the first", async () => {
  const x = await exported(1_500);
  try {
    const env = x.target("busy");
    await Deno.mkdir(`${x.dir}/busy`);
    const root = new URL("..", import.meta.url).pathname;
    const first = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "cli/admin.ts", "import", "--from", x.file],
      cwd: root,
      env,
      stdout: "null",
      stderr: "null",
    }).spawn();
    // Paused once it has said it is at work (its state names it).
    let watcher: Deno.Kv | null = null;
    for (let i = 0; i < 20_000; i++) {
      await sleep(1);
      watcher ??= await Deno.openKv(env.KV_PATH).catch(() => null);
      if ((await watcher?.get<{ pid?: number }>(["import"]))?.value?.pid === first.pid) break;
    }
    watcher?.close();
    first.kill("SIGSTOP");
    try {
      const started = Date.now();
      const second = await refused(env, x.file);
      assert.match(
        second,
        new RegExp(`another import into this store is running \\(pid ${first.pid}, started `),
      );
      assert.ok(Date.now() - started < 10_000, `refused after ${Date.now() - started} ms`);
    } finally {
      first.kill("SIGCONT");
    }
    assert.equal((await first.status).code, 0, "the first import finishes");
    // Finished: the same file again is the store that holds a team.
    assert.match(await refused(env, x.file), /holds 1 team/);
  } finally {
    await x.cleanup();
  }
});

/** Runs an import in a child process and kills it once `written` holds in the target. */
async function importKilledWhen(
  env: Record<string, string>,
  file: string,
  written: (kv: Deno.Kv) => Promise<boolean>,
) {
  const root = new URL("..", import.meta.url).pathname;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "cli/admin.ts", "import", "--from", file],
    cwd: root,
    env,
    stdout: "null",
    stderr: "null",
  }).spawn();
  let watcher: Deno.Kv | null = null;
  for (let i = 0; i < 20_000; i++) {
    await sleep(1);
    watcher ??= await Deno.openKv(env.KV_PATH).catch(() => null);
    if (watcher && await written(watcher)) break;
  }
  child.kill("SIGKILL");
  await child.status;
  watcher?.close();
}

test("import: killed as its first records land, of a store itself imported, and run again, it finishes", async () => {
  const x = await exported(300);
  try {
    // The workspace moves on: imported into B, exported from it, imported into C.
    const b = x.target("b");
    await Deno.mkdir(`${x.dir}/b`);
    await cli(b, "import", "--from", x.file);
    const fromB = `${x.dir}/from-b.jsonl`;
    await cli(b, "export", "--to", fromB);
    const c = x.target("c");
    await Deno.mkdir(`${x.dir}/c`);
    await importKilledWhen(c, fromB, async (kv) => {
      for await (const _ of kv.list({ prefix: ["teams"] }, { limit: 1 })) return true;
      return false;
    });
    assert.ok((await keysOf(c.KV_PATH)).some((k) => k.startsWith('["teams"')), "a team landed");
    await cli(c, "import", "--from", fromB);
    const straight = x.target("straight");
    await Deno.mkdir(`${x.dir}/straight`);
    await cli(straight, "import", "--from", fromB);
    assert.deepEqual(await keysOf(c.KV_PATH), await keysOf(straight.KV_PATH));
  } finally {
    await x.cleanup();
  }
});

/** A target whose import state names process `pid` of this host, last heard from `ago` ms ago. */
async function stateNaming(env: Record<string, string>, pid: number, ago: number) {
  const kv = await Deno.openKv(env.KV_PATH);
  try {
    const at = new Date(Date.now() - ago).toISOString();
    await kv.set(["import"], {
      export_id: crypto.randomUUID(),
      started_at: at,
      finished_at: null,
      pid,
      host: Deno.hostname(),
      heartbeat_at: at,
    });
  } finally {
    kv.close();
  }
}

test("import: an import whose process is a zombie, or silent for 30 s, holds nothing", async () => {
  const x = await exported(5);
  // A child that exits at once, which its parent never reaps: a zombie while the parent sleeps.
  const parent = new Deno.Command("python3", {
    args: [
      "-c",
      "import os,time\npid=os.fork()\nif pid==0: os._exit(0)\nprint(pid,flush=True)\ntime.sleep(60)",
    ],
    stdout: "piped",
  }).spawn();
  const asleep = new Deno.Command("sleep", { args: ["60"] }).spawn();
  try {
    // Its whole line: on a busy machine the first read may hold only part of it.
    const reader = parent.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let printed = "";
    while (!printed.includes("\n")) {
      const read = await reader.read();
      if (read.done) throw new Error(`python3 printed no pid: ${JSON.stringify(printed)}`);
      printed += read.value;
    }
    const zombie = Number(printed.trim());
    assert.ok(zombie > 0, printed);
    const z = x.target("zombie");
    await Deno.mkdir(`${x.dir}/zombie`);
    await stateNaming(z, zombie, 0);
    assert.ok((await cli(z, "import", "--from", x.file)).records > 0, "past the zombie's state");
    // A process that runs, but last said it was at work 31 s ago: hung, or its pid another's.
    const silent = x.target("silent");
    await Deno.mkdir(`${x.dir}/silent`);
    await stateNaming(silent, asleep.pid, 31_000);
    assert.ok((await cli(silent, "import", "--from", x.file)).records > 0, "past the silent one");
  } finally {
    for (const child of [parent, asleep]) {
      try {
        child.kill("SIGKILL");
      } catch {
        // Gone already: what the test found out, not a second failure over it.
      }
    }
    await Promise.all([parent.status, asleep.status, parent.stdout.cancel().catch(() => {})]);
    await x.cleanup();
  }
});

test("import: the release before this one refuses this one's export, which it would import only in part", async () => {
  const x = await exported(5);
  const previous = await unpackRelease(RELEASES.find((r) => r.previous)!.name);
  try {
    const env = x.target("rolled-back");
    await Deno.mkdir(`${x.dir}/rolled-back`);
    const out = await releaseCliRun(previous, env, "import", "--from", x.file);
    assert.equal(out.code, 1, out.stdout);
    assert.match(out.stderr, /\(format 2, layout 3\), newer than this one/);
    assert.deepEqual(await keysOf(env.KV_PATH).catch(() => []), [], "nothing was written");
  } finally {
    await Deno.remove(previous, { recursive: true });
    await x.cleanup();
  }
});
