/**
 * openapi.yaml stays generator-friendly: the types openapi-typescript makes of it are the ones
 * committed (examples/api.d.ts), and the README's typed client, examples/typed_client.ts, checks
 * against them and runs against a live service.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import type { Message } from "../core/types.ts";
import { startServer, workspace } from "./harness.ts";

const root = new URL("..", import.meta.url).pathname;

/** What `deno task types` runs, minus its output path. */
function typesCommand(): string[] {
  const task = JSON.parse(Deno.readTextFileSync(`${root}/deno.json`)).tasks.types as string;
  return task.split(" ");
}

Deno.test("typed client: the committed types are what openapi-typescript makes of openapi.yaml", async () => {
  const dir = await Deno.makeTempDir({ prefix: "types-" });
  try {
    const [command, ...args] = typesCommand();
    const out = args.map((a) => a === "examples/api.d.ts" ? `${dir}/api.d.ts` : a);
    // The task runs Deno itself: the one running these tests, Node or not on PATH.
    const run = await new Deno.Command(command === "deno" ? Deno.execPath() : command, {
      args: out,
      cwd: root,
      stdout: "null",
      stderr: "piped",
    })
      .output();
    assert.ok(run.success, new TextDecoder().decode(run.stderr));
    assert.equal(
      await Deno.readTextFile(`${dir}/api.d.ts`),
      await Deno.readTextFile(`${root}/examples/api.d.ts`),
      "examples/api.d.ts is stale: run `deno task types`",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("typed client: the docs show examples/typed_client.ts as it is", async () => {
  const readme = await Deno.readTextFile(`${root}/docs/api.md`);
  const start = readme.indexOf("```ts\n", readme.indexOf("## A typed client")) + "```ts\n".length;
  assert.equal(
    readme.slice(start, readme.indexOf("```", start)),
    await Deno.readTextFile(`${root}/examples/typed_client.ts`),
  );
});

Deno.test("typed client: the docs' command runs it and leaves the tree as it was", async () => {
  const readme = await Deno.readTextFile(`${root}/docs/api.md`);
  const after = readme.indexOf("Run it against the service with a token");
  const start = readme.indexOf("```sh\n", after) + "```sh\n".length;
  const command = readme.slice(start, readme.indexOf("```", start));
  const locks = () =>
    Promise.all(["deno.lock", "tests/deno.lock"].map((f) => Deno.readTextFile(`${root}/${f}`)));
  const before = await locks();
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const run = await new Deno.Command("bash", {
      args: ["-c", command],
      cwd: root,
      env: { BASE: s.url, TOKEN: w.admin.token, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(run.success, new TextDecoder().decode(run.stderr));
    assert.match(new TextDecoder().decode(run.stdout), /^posting into #general\n/);
    assert.deepEqual(await locks(), before, "neither lock changed");
  } finally {
    await s.close();
  }
});

Deno.test("typed client: the example type-checks and runs against a live service", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const run = await new Deno.Command(Deno.execPath(), {
      // The tests' lock, which has openapi-fetch: the service's own lock keeps to what it runs.
      args: [
        "run",
        "--lock=tests/deno.lock",
        "--allow-net",
        "--allow-env",
        "examples/typed_client.ts",
      ],
      cwd: root,
      env: { API_URL: `${s.url}/api/v1`, API_TOKEN: w.admin.token, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(run.stdout);
    assert.ok(run.success, new TextDecoder().decode(run.stderr));
    assert.match(
      stdout,
      /^posting into #general\nposted [0-9a-f-]{36}\n\d+ events ready in the feed\n$/,
    );
    const id = /posted (\S+)/.exec(stdout)![1];
    const stored = await s.ctx.kv.get<Message>(keys.message(id));
    assert.equal(stored.value?.body, "Hello from a typed client");
    const check = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--lock=tests/deno.lock", "examples/typed_client.ts"],
      cwd: root,
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(check.success, new TextDecoder().decode(check.stderr));
  } finally {
    await s.close();
  }
});
