/**
 * Every CLI error is a line or two an operator can act on, never a stack trace: each command run
 * with missing flags, malformed and unknown ids, unknown flags, and paths that are missing, empty
 * or not writable.
 */
import assert from "node:assert/strict";
import { cliRun, sharedStore, startService } from "./processes.ts";

/** The command names `admin help` lists. */
async function commandNames(env: Record<string, string>): Promise<string[]> {
  const { stdout } = await cliRun(env, "help");
  return [...stdout.matchAll(/^ {2}([a-z][a-z:-]+)\s/gm)].map((m) => m[1]);
}

/** Runs `jobs` with at most `n` at a time. */
async function inTurns<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]();
    }
  }));
  return out;
}

Deno.test("cli errors: bad paths, ids and flags get a line or two, never a stack trace", async () => {
  const store = await sharedStore();
  await (await startService(store.env)).kill();
  const dir = await Deno.makeTempDir({ prefix: "cli-errors-" });
  try {
    const empty = `${dir}/empty`;
    await Deno.writeFile(empty, new Uint8Array());
    const names = await commandNames(store.env);
    assert.ok(names.length > 30, names.join(" "));
    const bogus = "00000000-0000-7000-8000-000000000000";
    const cases: string[][] = [];
    for (const name of names) {
      cases.push([name, "--bogus-flag", "x"]);
      cases.push([name, "--id", "not-a-uuid", "--team", "nope", "--user", "nope"]);
      cases.push([name, "--id", bogus, "--team", bogus, "--user", bogus, "--app", bogus]);
    }
    cases.push(
      ["backup", "--to", `${dir}/missing-dir/x.sqlite3`],
      ["backup", "--to", "/proc/x.sqlite3"],
      ["restore", "--from", "/dev/null"],
      ["restore", "--from", empty],
      ["restore", "--from", `${dir}/nothing`],
      ["export", "--to", `${dir}/missing-dir/x.jsonl`],
      ["import", "--from", empty],
      ["import", "--from", "/dev/null"],
      ["import", "--from", `${dir}/nothing`],
      ["import", "--from", dir],
      ["restore", "--from", dir],
    );
    const results = await inTurns(cases.map((args) => () => cliRun(store.env, ...args)), 6);
    const traced = results.flatMap((r, i) =>
      r.code !== 0 && (/^\s+at /m.test(r.stderr) || r.stderr.trim().split("\n").length > 2)
        ? [`${cases[i].join(" ")}:\n${r.stderr}`]
        : []
    );
    assert.deepEqual(traced, [], "stack traces or long errors");
    // What the operator gave is named, with what to do: never the bare "failed: <os error>".
    const bare = results.flatMap((r, i) =>
      /: failed: /.test(r.stderr) ? [`${cases[i].join(" ")}: ${r.stderr}`] : []
    );
    assert.deepEqual(bare, [], "errors that don't say what was wrong");
    const folder = results[cases.findIndex((c) => c[0] === "import" && c[2] === dir)];
    assert.match(folder.stderr, /is a folder; give the file in it/);
    for (const [i, r] of results.entries()) {
      if (cases[i].includes("--bogus-flag")) assert.notEqual(r.code, 0, cases[i].join(" "));
    }
  } finally {
    await store.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli errors: the app commands take the app as --id or --app alike", async () => {
  const store = await sharedStore();
  const service = await startService(store.env);
  try {
    const made = await cliRun(
      store.env,
      "app:create",
      "--name",
      "Either",
      "--redirect-uris",
      "https://example.com/cb",
      "--scopes",
      "channels:read",
    );
    assert.equal(made.code, 0, made.stderr);
    const { id } = JSON.parse(made.stdout);
    for (
      const args of [["app:export", "--id", id], ["app:export", "--app", id], [
        "app:tokens",
        "--id",
        id,
      ], ["app:tokens", `--app=${id}`]]
    ) {
      const out = await cliRun(store.env, ...args);
      assert.equal(out.code, 0, `${args.join(" ")}: ${out.stderr}`);
    }
    // Where --id names something else, it is not taken for the app.
    const revoke = await cliRun(store.env, "app:token:revoke", "--id", id);
    assert.equal(revoke.code, 2);
    assert.match(revoke.stderr, /--app/);
  } finally {
    await service.kill();
    await store.cleanup();
  }
});
