/**
 * `--help` on every task of deno.json says how to use it and exits 0, doing nothing else: no
 * service started, no store or key made, no stack trace (issue 69).
 */
import assert from "node:assert/strict";

const root = new URL("..", import.meta.url).pathname;

Deno.test("tasks: every task answers --help and does nothing else", async () => {
  const { tasks } = JSON.parse(await Deno.readTextFile(`${root}/deno.json`));
  const dir = await Deno.makeTempDir({ prefix: "task-help-" });
  try {
    for (const task of Object.keys(tasks)) {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["task", "-q", task, "--help"],
        cwd: root,
        env: { KV_PATH: `${dir}/kv.sqlite3`, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(60_000),
      }).output();
      const stdout = new TextDecoder().decode(out.stdout);
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, `${task} --help: exit ${out.code}\n${stderr}`);
      assert.match(stdout, /usage|USAGE|Usage/, `${task} --help says how to run it`);
      assert.doesNotMatch(stdout + stderr, /\n\s+at (file|ext):/, `${task} --help: no stack`);
    }
    assert.deepEqual(await Array.fromAsync(Deno.readDir(dir)), [], "no store or key was made");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
