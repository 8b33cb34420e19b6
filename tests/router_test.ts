/**
 * Every route fits Hono's RegExpRouter, the one its default router picks when it can: a single
 * route it can't take (a static segment beside a parameter, each followed by the same path) sends
 * every request of the app through the trie router instead, which cost a post 2-3% of its CPU.
 */
import assert from "node:assert/strict";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { createApp } from "../routes/app.ts";
import { appParts } from "./harness.ts";
import { loadSettings } from "../core/settings.ts";
import { wrapStore } from "../kv/store/open.ts";
import { createKeyring, generateAppKey } from "../core/keyring.ts";

Deno.test("routing: every route fits the regular-expression router", async () => {
  const kv = wrapStore(await Deno.openKv(":memory:"), ":memory:");
  const ctx = {
    kv,
    settings: loadSettings({ KV_PATH: ":memory:" }),
    keyring: await createKeyring(generateAppKey()),
  };
  const app = createApp(ctx, appParts(ctx));
  try {
    const router = new RegExpRouter<string>();
    const refused = app.routes.filter(({ method, path }) => {
      try {
        router.add(method, path, path);
        return false;
      } catch {
        return true;
      }
    }).map(({ method, path }) => `${method} ${path}`);
    assert.deepEqual(refused, []);
    assert.doesNotThrow(() => router.match("GET", "/up"));
  } finally {
    await app.close();
    kv.close();
  }
});
