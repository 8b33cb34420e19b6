/**
 * The store's layout version (decisions.md, "Store layout version"): the service upgrades an
 * older store at start, each step once, also when several processes start together; it refuses a
 * newer one in one line; the admin CLI never migrates and refuses both; GET / and /metrics say
 * what runs.
 */
import assert from "node:assert/strict";
import { SettingsError } from "../core/settings.ts";
import { VERSION } from "../core/version.ts";
import { keys } from "../kv/keys.ts";
import { LAYOUT_VERSION, migrate, readLayout } from "../kv/store/migrations.ts";
import { checkResponse } from "./openapi_check.ts";
import { withWorkspace } from "./harness.ts";
import { measureBacklog } from "../kv/outbox/backlog.ts";
import { post, receiver, subscribe } from "./webhook_receivers.ts";
import { runToExit, sharedStore, startService } from "./processes.ts";
import { wrapStore } from "../kv/store/open.ts";
import type { Store } from "../kv/store/store.ts";

const layoutOf = async (kv: Store) => (await kv.get<{ version: number }>(keys.layout())).value;

Deno.test("layout: a store made before the version was kept is upgraded once, in order", async () => {
  await withWorkspace(async (s) => {
    // The suite's stores are made the way earlier releases made them: no layout recorded.
    assert.equal(await layoutOf(s.ctx.kv), null);
    assert.equal(await readLayout(s.ctx.kv), 0, "holding data, without the tokens migration");
    assert.equal(await migrate(s.ctx.kv), 0, "found at 0");
    assert.equal((await layoutOf(s.ctx.kv))?.version, LAYOUT_VERSION);
    assert.equal(await migrate(s.ctx.kv), LAYOUT_VERSION, "then already there");
  });
});

Deno.test("layout: a store whose tokens migration ran is at 1; a new one starts at the latest", async () => {
  const kv = wrapStore(await Deno.openKv(":memory:"), ":memory:");
  try {
    assert.equal(await readLayout(kv), null, "nothing written yet");
    assert.equal(await migrate(kv), null);
    assert.equal(await readLayout(kv), LAYOUT_VERSION);
    await kv.delete(keys.layout());
    await kv.set(keys.migration("user_tokens"), { at: new Date().toISOString() });
    assert.equal(await readLayout(kv), 1);
  } finally {
    kv.close();
  }
});

Deno.test("layout: processes starting together all upgrade, and agree", async () => {
  await withWorkspace(async (s) => {
    const found = await Promise.all(Array.from({ length: 5 }, () => migrate(s.ctx.kv)));
    assert.ok(found.every((f) => f === 0 || f === LAYOUT_VERSION), String(found));
    assert.equal((await layoutOf(s.ctx.kv))?.version, LAYOUT_VERSION);
  });
});

Deno.test("layout: a newer layout is refused, naming both versions, and left as it is", async () => {
  const kv = wrapStore(await Deno.openKv(":memory:"), ":memory:");
  try {
    const newer = { version: LAYOUT_VERSION + 1, upgraded_at: new Date().toISOString() };
    await kv.set(keys.layout(), newer);
    await assert.rejects(
      () => migrate(kv),
      (e) =>
        e instanceof SettingsError &&
        e.message.includes(
          `version ${LAYOUT_VERSION + 1}, newer than this release knows (${LAYOUT_VERSION})`,
        ),
    );
    assert.deepEqual(await layoutOf(kv), newer);
  } finally {
    kv.close();
  }
});

Deno.test("layout: the service refuses a newer store in one line; the CLI refuses older and newer", async () => {
  const store = await sharedStore();
  try {
    const service = await startService(store.env);
    await service.kill();
    assert.equal(
      (await layoutOf(store.ctx.kv))?.version,
      LAYOUT_VERSION,
      "the service upgraded it",
    );

    const before = await storeDump(store.ctx.kv);
    await store.ctx.kv.set(keys.layout(), { version: LAYOUT_VERSION - 1, upgraded_at: "then" });
    const older = await admin(store.env, "team:create", "--name", "Nope");
    assert.equal(older.code, 1);
    assert.match(older.stderr.trim(), /^KV_PATH: the store's layout is version \d+, older than/);
    assert.equal(older.stderr.trim().split("\n").length, 1);

    await store.ctx.kv.set(keys.layout(), { version: LAYOUT_VERSION + 1, upgraded_at: "later" });
    const newer = await admin(store.env, "team:create", "--name", "Nope");
    assert.equal(newer.code, 1);
    assert.match(newer.stderr.trim(), /^KV_PATH: the store's layout is version \d+, newer than/);
    const refused = await runToExit(store.env);
    assert.equal(refused.code, 1);
    assert.match(refused.output.trim().split("\n").at(-1)!, /^KV_PATH: .* newer than this release/);
    const after = await storeDump(store.ctx.kv);
    assert.deepEqual(after.filter((k) => k !== "layout"), before.filter((k) => k !== "layout"));
  } finally {
    await store.cleanup();
  }
});

Deno.test("layout: GET / and /metrics say the version and the store layout", async () => {
  const store = await sharedStore({ METRICS_TOKEN: "metrics-token-0123456789" });
  const service = await startService(store.env);
  try {
    const res = await fetch(`${service.url}/`);
    const index = await res.json();
    checkResponse("GET", "/", res.status, index);
    assert.equal(index.version, VERSION);
    assert.equal(index.store_layout, LAYOUT_VERSION);
    assert.match(VERSION, /^\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$/);
    const metrics = await fetch(`${service.url}/metrics`, {
      headers: { Authorization: "Bearer metrics-token-0123456789" },
    });
    const text = await metrics.text();
    assert.ok(
      text.includes(`build_info{version="${VERSION}",layout="${LAYOUT_VERSION}"} 1`),
      text.slice(0, 3000),
    );
    assert.match(
      service.output(),
      new RegExp(`version ${VERSION}, store layout ${LAYOUT_VERSION}`),
    );
  } finally {
    await service.kill();
    await store.cleanup();
  }
});

/** Every key of the store, as text: what a refusal must leave as it was. */
async function storeDump(kv: Store): Promise<string[]> {
  const out: string[] = [];
  for await (const e of kv.list({ prefix: [] })) out.push(e.key.join("/"));
  return out;
}

/** Runs `deno task admin ...` on the store; its exit code and stderr. */
async function admin(env: Record<string, string>, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    cwd: new URL("..", import.meta.url).pathname,
    env: { ...env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("layout: an upgrade counts pending jobs from what is in the store", async () => {
  const r = receiver(() => new Response(null, { status: 503 }));
  await withWorkspace(
    async (s, w) => {
      const sub = await subscribe(s, w.admin.token, r.url);
      for (let i = 0; i < 6; i++) await post(s, w.admin.token, w.team.general_channel_id, `#${i}`);
      // As a release before the job counts left them: none kept.
      await s.ctx.kv.delete(keys.jobsCreated(sub.id));
      await s.ctx.kv.delete(keys.jobsSettled(sub.id));
      assert.equal((await measureBacklog(s.ctx.kv)).pending, 0, "the finding: 0 read, 6 wait");
      await s.ctx.kv.set(keys.layout(), { version: 2, upgraded_at: new Date().toISOString() });
      await migrate(s.ctx.kv);
      assert.equal((await measureBacklog(s.ctx.kv)).pending, 6);
    },
  ).finally(() => r.close());
});

Deno.test("layout: unreleased code carries the next version with a prerelease tag", async () => {
  const changelog = await Deno.readTextFile(new URL("../CHANGELOG.md", import.meta.url));
  const first = /^## (\S+)/m.exec(changelog)?.[1];
  const released = [...changelog.matchAll(/^## (\d+\.\d+\.\d+)/gm)].map((m) => m[1]);
  if (first === "Unreleased") {
    assert.match(VERSION, /-/, "main with unreleased changes must not claim a release's version");
    assert.ok(!released.includes(VERSION.split("-")[0]), `${VERSION} was released already`);
  } else {
    assert.equal(VERSION, first, "a release's version heads CHANGELOG.md");
  }
});

Deno.test("layout: each release in CHANGELOG.md names its date and commit, and no doc relies on a git tag", async () => {
  const root = new URL("../", import.meta.url);
  const changelog = await Deno.readTextFile(new URL("CHANGELOG.md", root));
  const releases = [...changelog.matchAll(/^## (\d+\.\d+\.\d+)(.*)$/gm)];
  assert.ok(releases.length >= 5, "the releases are listed");
  const git = await new Deno.Command("git", { args: ["rev-parse", "--git-dir"], cwd: root })
    .output().catch(() => null);
  for (const [, version, rest] of releases) {
    const named = / — (\d{4}-\d{2}-\d{2}), commit ([0-9a-f]{7,40}) — /.exec(rest);
    assert.ok(named, `## ${version} names its date and commit`);
    if (!git?.success) continue;
    const shown = await new Deno.Command("git", {
      args: ["show", "-s", "--format=%ad", "--date=short", named[2]],
      cwd: root,
    }).output();
    // A shallow copy may lack old commits; where one is there, it is that release's.
    if (shown.success) {
      assert.equal(new TextDecoder().decode(shown.stdout).trim(), named[1], `${version}'s date`);
    }
  }
  const docs = [
    "README.md",
    "CHANGELOG.md",
    ...await Array.fromAsync(
      Deno.readDir(new URL("docs", root)),
      (e) => `docs/${e.name}`,
    ),
  ].filter((p) => p.endsWith(".md"));
  for (const doc of docs) {
    const text = await Deno.readTextFile(new URL(doc, root));
    assert.doesNotMatch(
      text,
      /git (checkout|switch|tag)[^`\n]*\bv\d+\.\d+\.\d+|tagged in git/,
      doc,
    );
  }
});
