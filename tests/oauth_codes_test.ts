/**
 * An authorization code is its client's, and an install lands whole or not at all (decisions.md
 * "Apps", "Under concurrency too"): another client, a wrong verifier or redirect_uri leave a code
 * as it was; a failure at any step of an install leaves nothing behind and the code unspent.
 */
import assert from "node:assert/strict";
import { api, startServer, type TestServer, type Workspace, workspace } from "./harness.ts";
import { approvedCode, authorizeQuery, pkce, registerApp, tokenRequest } from "./oauth_client.ts";
import { keys } from "../kv/keys.ts";
import type { Token } from "../core/types.ts";
import type { AppInstall, AuthorizationCode } from "../core/app_records.ts";
import { sha256Hex } from "../core/random.ts";
import type { Ctx } from "../domain/context.ts";
import { wrapStore } from "../kv/store/open.ts";
import { findCode, redeemCode } from "../domain/apps/oauth.ts";

async function withServer(fn: (s: TestServer, w: Workspace) => Promise<void>) {
  const s = await startServer();
  try {
    await fn(s, await workspace(s.ctx));
  } finally {
    await s.close();
  }
}

Deno.test("oauth codes: another client, a wrong verifier or redirect_uri leave the code to its own client", async () => {
  await withServer(async (s, w) => {
    const own = await registerApp(s.ctx, {
      redirectUris: ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"],
    });
    const other = await registerApp(s.ctx);
    const { verifier, challenge } = await pkce();
    const code = await approvedCode(s, {
      userId: w.admin.user.id,
      query: authorizeQuery(own.app, challenge),
    });
    const form = (extra: Record<string, string> = {}) => ({
      grant_type: "authorization_code",
      code,
      redirect_uri: own.app.redirect_uris[0],
      code_verifier: verifier,
      ...extra,
    });
    const attempts = [
      await tokenRequest(s, { ...other, form: form() }),
      await tokenRequest(s, { ...own, form: form({ code_verifier: "b".repeat(43) }) }),
      await tokenRequest(s, { ...own, form: form({ redirect_uri: own.app.redirect_uris[1] }) }),
    ];
    for (const a of attempts) assert.equal(a.body.error, "invalid_grant", JSON.stringify(a.body));
    const stored = await s.ctx.kv.get<AuthorizationCode>(keys.oauthCode(sha256Hex(code)));
    assert.equal(stored.value?.used_at, null, "a refused attempt spent the code");

    const rightful = await tokenRequest(s, { ...own, form: form() });
    assert.equal(rightful.res.status, 200, JSON.stringify(rightful.body));
    const token = rightful.body.access_token;
    // Presented again by another app: refused, and the rightful install keeps working.
    const late = await tokenRequest(s, { ...other, form: form() });
    assert.equal(late.body.error, "invalid_grant");
    assert.equal((await api(s, "GET", "/channels", { token })).status, 200);
    // Its own client's second use is a replay: what the first gave is revoked.
    const replay = await tokenRequest(s, { ...own, form: form() });
    assert.equal(replay.body.error, "invalid_grant");
    assert.equal((await api(s, "GET", "/channels", { token })).status, 401);
  });
});

/** How many of the store's keys start with each of `prefixes`. */
async function census(ctx: Ctx, prefixes: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const p of prefixes) {
    out[p] = 0;
    for await (const _ of ctx.kv.list({ prefix: [p] })) out[p]++;
  }
  return out;
}

/**
 * A Deno KV on the same file whose `n`th read or commit throws, as a store whose disk or network
 * fails part way: every step of a write's path fails once in some round.
 */
function failingAt(kv: Deno.Kv, n: number): Deno.Kv {
  let calls = 0;
  const step = () => {
    if (++calls === n) throw new Error(`injected failure at step ${n}`);
  };
  const fake = new Proxy(kv, {
    get(target, prop) {
      if (prop === "get" || prop === "getMany" || prop === "list") {
        return (...args: unknown[]) => {
          step();
          // deno-lint-ignore no-explicit-any
          return (target as any)[prop](...args);
        };
      }
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          return new Proxy(op, {
            get(o, p) {
              if (p === "commit") {
                return () => {
                  step();
                  return o.commit();
                };
              }
              // deno-lint-ignore no-explicit-any
              const v = (o as any)[p];
              return typeof v === "function" ? v.bind(o) : v;
            },
          });
        };
      }
      // deno-lint-ignore no-explicit-any
      const v = (target as any)[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return fake;
}

Deno.test("oauth codes: an install that fails at any step leaves nothing live and the code unspent", async () => {
  const dir = await Deno.makeTempDir({ prefix: "install-faults-" });
  const path = `${dir}/kv.sqlite3`;
  const s = await startServer({ KV_PATH: path });
  try {
    const reg = await registerApp(s.ctx, { incomingWebhook: true });
    const { verifier, challenge } = await pkce();
    const watched = ["app_installs", "incoming", "users", "user_channels", "timeline", "events"];
    let failures = 0;
    for (let n = 1;; n++) {
      // A team of its own each round: the first install, with the most to do (a new bot that
      // joins the channel, its token, its hook).
      const w = await workspace(s.ctx, `Team ${n}`);
      const code = await approvedCode(s, {
        userId: w.admin.user.id,
        query: authorizeQuery(reg.app, challenge),
        form: { channel: w.team.general_channel_id },
      });
      const before = await census(s.ctx, watched);
      const tokens = await liveBotTokens(s.ctx);
      const raw = await Deno.openKv(path);
      const ctx: Ctx = { ...s.ctx, kv: wrapStore(failingAt(raw, n), path) };
      let failed = false;
      try {
        await redeemCode(ctx, reg.app, await findCode(ctx, code), { code_verifier: verifier });
      } catch (e) {
        failed = true;
        assert.match(String(e), /injected failure/);
      } finally {
        await ctx.kv.settled();
        ctx.kv.close();
      }
      if (!failed) break;
      failures++;
      assert.deepEqual(await census(s.ctx, watched), before, `step ${n}: a partial install`);
      assert.deepEqual(await liveBotTokens(s.ctx), tokens, `step ${n}: a token escaped`);
      const stored = await s.ctx.kv.get<AuthorizationCode>(keys.oauthCode(sha256Hex(code)));
      assert.equal(stored.value?.used_at, null, `step ${n}: the code was spent`);
      // The code still works for its client once the store is well again, and installs whole.
      const retried = await tokenRequest(s, {
        ...reg,
        form: { grant_type: "authorization_code", code, code_verifier: verifier },
      });
      assert.equal(retried.res.status, 200, `step ${n}: ${JSON.stringify(retried.body)}`);
      const install = await s.ctx.kv.get<AppInstall>(keys.install(w.team.id, reg.app.id));
      const hook = await fetch(retried.body.incoming_webhook.url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ text: `installed at step ${n}` }),
      });
      assert.equal(hook.status, 201, await hook.text());
      assert.equal(install.value?.bot_user_id, retried.body.bot_user_id);
    }
    assert.ok(failures >= 8, `only ${failures} steps were failed`);
    console.log(`install faults: ${failures} steps failed in turn, each left nothing behind`);
  } finally {
    await s.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/** The ids of the live bot tokens in the store. */
async function liveBotTokens(ctx: Ctx): Promise<string[]> {
  const out: string[] = [];
  for await (const e of ctx.kv.list<Token>({ prefix: ["tokens"] })) {
    if (e.value.kind === "bot" && !e.value.revoked_at) out.push(e.value.id);
  }
  return out.sort();
}
