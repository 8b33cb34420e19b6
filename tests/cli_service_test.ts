/**
 * What the CLI is told about the service on its store (decisions.md, "Admin CLI", "Several
 * processes on one store"): its links name a running instance, never merely the last one
 * started; a moved store gets no key file of its own; a CLI on a newer Deno than the service's
 * writes nothing.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { cli, cliRun, runToExit, sharedStore, startService } from "./processes.ts";
import { workspace } from "./harness.ts";

Deno.test("cli service: links name a running instance, not the last one started", async () => {
  const store = await sharedStore();
  const main = await startService(store.env);
  try {
    const w = await workspace(store.ctx);
    const other = await startService(store.env);
    assert.notEqual(new URL(other.url).port, new URL(main.url).port);
    assert.equal(await other.stop("SIGTERM"), 0);
    const { url } = await cli(store.env, "login-link", "--user", w.admin.user.id);
    assert.equal(new URL(url).port, new URL(main.url).port, "the link names the running one");
    // One killed outright still counts as running for a while: the one running longest wins.
    const killed = await startService(store.env);
    await killed.kill();
    const again = await cli(store.env, "login-link", "--user", w.admin.user.id);
    assert.equal(new URL(again.url).port, new URL(main.url).port);
    // An instance whose BASE_URL the operator set names that address.
    const proxied = await startService({ ...store.env, BASE_URL: "https://chat.example.com" });
    try {
      const set = await cli(store.env, "login-link", "--user", w.admin.user.id);
      assert.match(set.url, /^https:\/\/chat\.example\.com\/settings\/login\//);
    } finally {
      await proxied.kill();
    }
  } finally {
    await main.kill();
    await store.cleanup();
  }
});

Deno.test("cli service: a moved store gets no new key file; the refusal says where the key is", async () => {
  const store = await sharedStore();
  const { APP_KEY: _key, ...keyless } = store.env;
  const moved = await Deno.makeTempDir({ prefix: "moved-" });
  try {
    const first = await startService(store.env);
    await first.kill();
    const env = { ...keyless, KV_PATH: `${moved}/kv.sqlite3` };
    // What the move leaves: a store made with a key, and no app.key beside it.
    for (const side of ["", "-wal"]) {
      await Deno.copyFile(store.env.KV_PATH + side, env.KV_PATH + side).catch(() => {});
    }
    const run = await runToExit(env);
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /APP_KEY: not set.*was made \(or imported\) with a key/);
    assert.equal(run.output.trim().split("\n").filter((l) => /APP_KEY/.test(l)).length, 1);
    await assert.rejects(Deno.stat(`${moved}/app.key`), Deno.errors.NotFound, "a key was written");
  } finally {
    await store.cleanup();
    await Deno.remove(moved, { recursive: true });
  }
});

Deno.test("cli service: a CLI on a newer Deno than the store's service writes nothing", async () => {
  const store = await sharedStore();
  const first = await startService(store.env);
  await first.stop("SIGTERM");
  try {
    const w = await workspace(store.ctx);
    // A minor older than the Deno this suite runs on (2.9 or Deploy's 2.5).
    const [major, minor] = Deno.version.deno.split(".").map(Number);
    const older = `${major}.${minor - 1}.0`;
    await store.ctx.kv.set(keys.serviceDeno(), older);
    const out = await cliRun(store.env, "token:create", "--user", w.bot.user.id, "--scopes", "all");
    assert.equal(out.code, 1, out.stdout);
    assert.equal(out.stderr.trim().split("\n").length, 1, out.stderr);
    const quoted = older.replaceAll(".", "\\.");
    assert.match(
      out.stderr,
      new RegExp(`runs Deno ${quoted}.*npx --yes deno@${quoted} run --allow-all`),
    );
    // Reading is harmless: lists still work.
    assert.equal((await cliRun(store.env, "team:list")).code, 0);
  } finally {
    await store.cleanup();
  }
});

Deno.test("cli service: a store file deleted under the running service is said, not served around", async () => {
  const store = await sharedStore();
  const service = await startService(store.env);
  try {
    const before = await fetch(`${service.url}/up`);
    assert.equal(before.status, 200, await before.text());
    await Deno.remove(store.env.KV_PATH);
    const after = await fetch(`${service.url}/up`);
    assert.equal(after.status, 503);
    const { message } = await after.json();
    assert.match(message, /KV_PATH: .* was deleted while the service runs/);
    assert.match(message, /Stop the service and start it again/);
  } finally {
    await service.kill();
    await store.cleanup();
  }
});
