/**
 * Deno fetches every npm package of the lock it runs with, whatever the program imports: the
 * service's deno.lock must hold only what it runs, or a first `deno task start` and the image
 * fetch the tests' browser driver and SDKs too. The tests' packages live in tests/deno.lock
 * (`deno task test` uses it; so must `deno task test tests/one_test.ts`).
 */
import assert from "node:assert/strict";

const root = new URL("..", import.meta.url);

Deno.test("lock: deno.lock pins exactly the packages of deno.json's import map", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  const lock = JSON.parse(await Deno.readTextFile(new URL("deno.lock", root)));
  const imported = Object.values(config.imports as Record<string, string>)
    .filter((s) => s.startsWith("npm:") && !s.endsWith("/"));
  assert.deepEqual(Object.keys(lock.specifiers).sort(), imported.sort());
});
