import assert from "node:assert/strict";
import { revokeTokenById } from "../domain/people/tokens.ts";
import { sha256Hex } from "../core/random.ts";
import { keys } from "../kv/keys.ts";
import type { Scope, Token } from "../core/types.ts";
import { SCOPES } from "../core/types.ts";
import {
  actor,
  api,
  assertStatus,
  clearOfWindowEdge,
  countKeys,
  type ServedRoutes,
  startServer,
  type TestServer,
  withWorkspace,
  type Workspace,
  workspace,
} from "./harness.ts";
import { checkResponse } from "./openapi_check.ts";
import { SLACK_METHODS } from "../routes/slack/web_api.ts";

/** A small rate limit counts requests within one clock-aligned minute: keep clear of its edge. */
const withEnv = async (
  env: Record<string, string>,
  fn: (s: TestServer & { routes: ServedRoutes }, w: Workspace) => Promise<void>,
) => {
  if (env.INTEGRATIONS_API_RATE_LIMIT) await clearOfWindowEdge();
  await withWorkspace(fn, env);
};

const ZERO_UUID = "00000000-0000-7000-8000-000000000000";

Deno.test("platform: /up answers 200 while KV answers, 503 once it does not", async () => {
  const s = await startServer();
  try {
    const up = await fetch(`${s.url}/up`);
    assert.equal(up.status, 200);
    assert.match(up.headers.get("content-type")!, /application\/json/);
    assert.equal((await up.json()).status, "ok");
    s.ctx.kv.close();
    const down = await fetch(`${s.url}/up`);
    assert.equal(down.status, 503);
    assert.equal(typeof (await down.json()).message, "string");
  } finally {
    await s.close().catch(() => {});
  }
});

Deno.test("platform: switched off, every route the app serves answers the 404 openapi.yaml declares", async () => {
  await withEnv({ INTEGRATIONS_ENABLED: "false" }, async (s, w) => {
    // The operator's admin path stays: a service whose platform is off is still managed.
    const open = new Set(["/", "/up", "/metrics", "/admin/v1/:command"]);
    const seen = new Set<string>();
    const undeclared: string[] = [];
    for (const { method, path } of s.routes) {
      if (method === "ALL" || path.endsWith("*") || open.has(path)) continue;
      const paths = path === "/api/slack/:method"
        ? SLACK_METHODS.map((m) => `/api/slack/${m}`)
        : [path.replace(/:[A-Za-z_]+/g, ZERO_UUID)];
      for (const concrete of paths) {
        if (seen.has(`${method} ${concrete}`)) continue;
        seen.add(`${method} ${concrete}`);
        const res = await fetch(`${s.url}${concrete}`, {
          method,
          headers: { Authorization: `Bearer ${w.admin.token}`, "Content-Type": "application/json" },
          body: method === "GET" || method === "HEAD" ? undefined : "{}",
        });
        const body = method === "HEAD" ? null : await res.json();
        assert.equal(res.status, 404, `${method} ${concrete}`);
        try {
          if (method !== "HEAD") checkResponse(method, concrete, res.status, body);
        } catch (e) {
          undeclared.push((e as Error).message.split(" (documented")[0]);
        }
      }
    }
    assert.ok(seen.size > 100, `${seen.size} routes`);
    assert.deepEqual(undeclared, []);
    const admin = await fetch(`${s.url}/admin/v1/team:list`, { method: "POST", body: "{}" });
    await admin.body?.cancel();
    assert.equal(admin.status, 401, "the admin path answers, unsigned: 401");
  });
});

Deno.test("platform: INTEGRATIONS_ENABLED=false hides every API and hook route, not /up", async () => {
  await withEnv({ INTEGRATIONS_ENABLED: "false" }, async (s, w) => {
    const ch = `/channels/${w.team.general_channel_id}`;
    const routes: [string, string][] = [
      ["GET", "/channels"],
      ["POST", "/channels"],
      ["GET", ch],
      ["POST", `${ch}/archive`],
      ["POST", `${ch}/unarchive`],
      ["GET", `${ch}/messages`],
      ["POST", `${ch}/messages`],
      ["GET", `${ch}/members`],
      ["POST", `${ch}/members`],
      ["DELETE", `${ch}/members/${w.member.user.id}`],
      ["GET", "/webhooks"],
      ["POST", "/webhooks"],
      ["GET", `/webhooks/${ZERO_UUID}`],
      ["GET", "/openapi.yaml"],
      ["GET", "/nope"],
    ];
    for (const [method, path] of routes) {
      for (const token of [w.admin.token, undefined]) {
        const res = await api(s, method, path, { token, body: method === "GET" ? undefined : {} });
        assertStatus(res, 404, `${method} ${path}`);
      }
    }
    for (const method of ["GET", "POST"]) {
      const res = await fetch(`${s.url}/hooks/anything`, {
        method,
        body: method === "POST" ? "{}" : undefined,
      });
      assert.equal(res.status, 404);
      assert.equal(typeof (await res.json()).message, "string");
    }
    const up = await fetch(`${s.url}/up`);
    assert.equal(up.status, 200);
    await up.body?.cancel();
  });
});

Deno.test("platform: unknown paths under /api/v1 are 404 JSON, a known one's other methods 405", async () => {
  await withEnv({}, async (s, w) => {
    for (const [method, path] of [["GET", "/nope"], ["GET", "/"]]) {
      const res = await api(s, method, path, { token: w.admin.token });
      assertStatus(res, 404, `${method} ${path}`);
      assert.ok(res.headers.get("X-RateLimit-Limit"));
    }
    const put = await api(s, "PUT", "/channels", { token: w.admin.token });
    assertStatus(put, 405);
    assert.equal(put.headers.get("Allow"), "GET, POST");
    assert.match(put.body.message, /PUT is not allowed on \/api\/v1\/channels; it takes GET, POST/);
    const del = await api(s, "DELETE", `/channels/${w.team.general_channel_id}`, {
      token: w.admin.token,
    });
    assertStatus(del, 405);
    assert.equal(del.headers.get("Allow"), "GET, PATCH");
    // The API without its prefix says where it lives.
    const bare = await fetch(`${s.url}/channels`, {
      headers: { Authorization: `Bearer ${w.admin.token}` },
    });
    assert.equal(bare.status, 404);
    assert.match((await bare.json()).message, /The API lives under \/api\/v1: \/api\/v1\/channels/);
    const nothing = await fetch(`${s.url}/nothing/here`);
    assert.equal(nothing.status, 404);
    assert.deepEqual(await nothing.json(), { message: "Not found." });
    // A slip in a path's words names the path meant, whatever ids it carries.
    const slips: [string, string][] = [
      ["/api/v1/chanels", "/api/v1/channels"],
      [
        `/api/v1/channels/${w.team.general_channel_id}/mesages`,
        `/api/v1/channels/${w.team.general_channel_id}/messages`,
      ],
      ["/api/v1/webhoks/", "/api/v1/webhooks"],
    ];
    for (const [typed, meant] of slips) {
      const res = await fetch(`${s.url}${typed}`, {
        headers: { Authorization: `Bearer ${w.admin.token}` },
      });
      assert.equal(res.status, 404, typed);
      assert.equal((await res.json()).message, `Not found. Did you mean ${meant}?`, typed);
    }
  });
});

Deno.test("platform: rate limit headers on every answer, 429 once the minute is used up", async () => {
  await withEnv({ INTEGRATIONS_API_RATE_LIMIT: "3" }, async (s, w) => {
    const t = w.member.token;
    const answers = [
      await api(s, "GET", "/channels", { token: t }),
      await api(s, "GET", `/channels/${ZERO_UUID}`, { token: t }),
      await api(s, "POST", "/channels", { token: t, raw: "{" }),
    ];
    assert.deepEqual(answers.map((r) => r.status), [200, 404, 422]);
    answers.forEach((r, i) => {
      assert.equal(r.headers.get("X-RateLimit-Limit"), "3");
      assert.equal(r.headers.get("X-RateLimit-Remaining"), String(2 - i));
    });
    const narrow = await actor(s.ctx, w.team, "Narrow", "member", ["members:read"]);
    const refused = await api(s, "GET", "/channels", { token: narrow.token });
    assertStatus(refused, 403, "scope");
    assert.equal(refused.headers.get("X-RateLimit-Remaining"), "2");
    const limited = await api(s, "GET", "/channels", { token: t });
    assertStatus(limited, 429, "fourth request");
    assert.equal(limited.headers.get("X-RateLimit-Limit"), "3");
    assert.equal(limited.headers.get("X-RateLimit-Remaining"), "0");
    const retryAfter = Number(limited.headers.get("Retry-After"));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `${retryAfter}`);
    assert.equal(limited.headers.get("X-RateLimit-Reset"), String(retryAfter));
    assert.equal(
      limited.body.message,
      `Too many requests: this token may make 3 a minute. Try again in ${retryAfter} s.`,
    );
    const other = await api(s, "GET", "/channels", { token: w.admin.token });
    assert.equal(other.status, 200, "each token has its own budget");
    assert.equal(other.headers.get("X-RateLimit-Remaining"), "2");
  });
});

async function tokenId(s: TestServer, value: string): Promise<string> {
  return (await s.ctx.kv.get<Token>(keys.token(sha256Hex(value)))).value!.id;
}

Deno.test("check order: platform off (404) before token (401)", async () => {
  await withEnv({ INTEGRATIONS_ENABLED: "false" }, async (s) => {
    assertStatus(await api(s, "GET", "/channels", {}), 404, "no token");
    assertStatus(await api(s, "GET", "/channels", { token: "tcb_nonsense" }), 404, "bad token");
  });
});

Deno.test("check order: token (401) before rate limit (429)", async () => {
  await withEnv({ INTEGRATIONS_API_RATE_LIMIT: "1" }, async (s, w) => {
    await api(s, "GET", "/channels", { token: w.bot.token });
    assertStatus(await api(s, "GET", "/channels", { token: w.bot.token }), 429, "over the limit");
    await revokeTokenById(s.ctx, await tokenId(s, w.bot.token), null);
    const res = await api(s, "GET", "/channels", { token: w.bot.token });
    assertStatus(res, 401, "revoked and over the limit");
    assert.equal(res.headers.get("Retry-After"), null);
  });
});

Deno.test("check order: rate limit (429) before scope (403)", async () => {
  await withEnv({ INTEGRATIONS_API_RATE_LIMIT: "2" }, async (s, w) => {
    const scopes = SCOPES.filter((x): x is Scope => x !== "channels:read");
    const { token } = await actor(s.ctx, w.team, "Narrow", "member", scopes);
    assertStatus(await api(s, "GET", "/channels", { token }), 403, "first");
    assertStatus(await api(s, "GET", "/channels", { token }), 403, "second");
    assertStatus(await api(s, "GET", "/channels", { token }), 429, "third");
  });
});

Deno.test("check order: scope (403) before resource (404)", async () => {
  await withEnv({}, async (s, w) => {
    const { token } = await actor(s.ctx, w.team, "Reader", "admin", ["channels:read"]);
    for (const id of [ZERO_UUID, "not-a-uuid"]) {
      assertStatus(await api(s, "POST", `/channels/${id}/archive`, { token }), 403, id);
      assertStatus(await api(s, "GET", `/channels/${id}/members`, { token }), 403, id);
    }
  });
});

Deno.test("check order: resource (404) before permission (403)", async () => {
  await withEnv({}, async (s, w) => {
    const secret = await api(s, "POST", "/channels", {
      token: w.admin.token,
      body: { name: "secret", visibility: "private" },
    });
    const id = secret.body.data.id;
    assertStatus(
      await api(s, "POST", `/channels/${id}/archive`, { token: w.member.token }),
      404,
      "member",
    );
    assertStatus(
      await api(s, "POST", `/channels/${id}/archive`, { token: w.bot.token }),
      404,
      "bot",
    );
    const general = `/channels/${w.team.general_channel_id}`;
    assertStatus(
      await api(s, "DELETE", `${general}/members/${w.bot.user.id}`, { token: w.member.token }),
      404,
      "removing a non-member from general",
    );
    assertStatus(
      await api(s, "DELETE", `${general}/members/${w.admin.user.id}`, { token: w.member.token }),
      403,
      "removing a member from general",
    );
  });
});

Deno.test("check order: permission (403) before validation (422)", async () => {
  await withEnv({}, async (s, w) => {
    const made = await api(s, "POST", "/channels", {
      token: w.admin.token,
      body: { name: "closing", visibility: "public" },
    });
    const ch = `/channels/${made.body.data.id}`;
    assert.equal((await api(s, "POST", `${ch}/archive`, { token: w.admin.token })).status, 200);
    assertStatus(
      await api(s, "POST", `${ch}/archive`, { token: w.member.token }),
      403,
      "not creator",
    );
    assertStatus(await api(s, "POST", `${ch}/archive`, { token: w.admin.token }), 422, "creator");
    const general = `/channels/${w.team.general_channel_id}`;
    assertStatus(
      await api(s, "POST", `${general}/unarchive`, { token: w.admin.token }),
      403,
      "general",
    );
    for (const raw of ["{", "[]", JSON.stringify({ user_id: "nope" })]) {
      const res = await api(s, "POST", `${ch}/members`, { token: w.admin.token, raw });
      assertStatus(res, 403, `adding to an archived channel with ${raw}`);
    }
  });
});

Deno.test("bad input: bodies that are not JSON objects get 422 with errors.request", async () => {
  await withEnv({}, async (s, w) => {
    const before = await countKeys(s.ctx.kv);
    for (const raw of ["", "{", "not json", "[]", "null", "42", '"text"', "[{}]"]) {
      const res = await api(s, "POST", "/channels", { token: w.admin.token, raw });
      assertStatus(res, 422, JSON.stringify(raw));
      assert.ok(Array.isArray(res.body.errors.request), JSON.stringify(res.body));
    }
    // Text that doesn't parse says where, and what to send.
    const broken = await api(s, "POST", "/channels", { token: w.admin.token, raw: "{'name': 1}" });
    assert.match(
      broken.body.message,
      /not valid JSON \(.*position 1.*\).*Content-Type: application\/json/,
    );
    const empty = await api(s, "POST", "/channels", { token: w.admin.token, raw: "" });
    assert.match(empty.body.message, /The body is empty/);
    assert.equal(await countKeys(s.ctx.kv), before);
  });
});

Deno.test("bad input: wrong types get 422 naming the field; unknown fields are ignored", async () => {
  await withEnv({}, async (s, w) => {
    const before = await countKeys(s.ctx.kv);
    const cases: [unknown, string][] = [
      [{ name: 7, visibility: "public" }, "name"],
      [{ name: ["x"], visibility: "public" }, "name"],
      [{ name: "x", visibility: true }, "visibility"],
      [{ name: "x", visibility: "public", topic: 5 }, "topic"],
      [{ visibility: "public" }, "name"],
    ];
    for (const [body, field] of cases) {
      const res = await api(s, "POST", "/channels", { token: w.admin.token, body });
      assertStatus(res, 422, JSON.stringify(body));
      assert.ok(Array.isArray(res.body.errors[field]), JSON.stringify(res.body));
      for (const messages of Object.values(res.body.errors)) {
        assert.ok((messages as unknown[]).every((m) => typeof m === "string"));
      }
    }
    assert.equal(await countKeys(s.ctx.kv), before);
    const extra = await api(s, "POST", "/channels", {
      token: w.admin.token,
      body: { name: "extra", visibility: "public", is_general: true, id: ZERO_UUID, color: "red" },
    });
    assert.equal(extra.status, 201);
    assert.equal(extra.body.data.is_general, false);
    assert.notEqual(extra.body.data.id, ZERO_UUID);
    assert.equal(extra.headers.get("X-Ignored-Fields"), "is_general, id, color");
    // Slack's name for a thread, posted here, is ignored; the answer says so.
    const slackish = await api(s, "POST", `/channels/${w.team.general_channel_id}/messages`, {
      token: w.admin.token,
      body: { body: "in the thread?", thread_ts: "1712345678.000100" },
    });
    assert.equal(slackish.status, 201);
    assert.equal(slackish.body.data.thread_root_id, null);
    assert.equal(slackish.headers.get("X-Ignored-Fields"), "thread_ts");
    const clean = await api(s, "POST", `/channels/${w.team.general_channel_id}/messages`, {
      token: w.admin.token,
      body: { body: "plain" },
    });
    assert.equal(clean.headers.get("X-Ignored-Fields"), null);
  });
});

Deno.test("bad input: bodies over 1 MiB get 413 JSON and write nothing", async () => {
  await withEnv({}, async (s, w) => {
    const before = await countKeys(s.ctx.kv);
    const huge = JSON.stringify({ name: "big", visibility: "public", topic: "x".repeat(1 << 20) });
    const res = await api(s, "POST", "/channels", { token: w.admin.token, raw: huge });
    assertStatus(res, 413, "sized body");
    assert.ok(res.headers.get("X-RateLimit-Limit"));
    const bytes = new TextEncoder().encode(huge);
    const streamed = await fetch(`${s.url}/api/v1/channels`, {
      method: "POST",
      headers: { Authorization: `Bearer ${w.admin.token}` },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < bytes.length; i += 64 * 1024) {
            c.enqueue(bytes.slice(i, i + 64 * 1024));
          }
          c.close();
        },
      }),
    });
    assert.equal(streamed.status, 413, "a chunked body without Content-Length");
    assert.equal(typeof (await streamed.json()).message, "string");
    const members = await api(s, "POST", `/channels/${w.team.general_channel_id}/members`, {
      token: w.admin.token,
      raw: JSON.stringify({ user_id: w.bot.user.id, pad: "x".repeat(1 << 20) }),
    });
    assertStatus(members, 413, "member add");
    assertStatus(await api(s, "POST", "/channels", { raw: huge }), 401, "no token");
    assert.equal(await countKeys(s.ctx.kv), before);
  });
});

Deno.test("bad input: malformed uuids and other teams' ids are 404, write nothing", async () => {
  await withEnv({}, async (s, w) => {
    const other = await workspace(s.ctx, "Other");
    const before = await countKeys(s.ctx.kv);
    const ids = ["not-a-uuid", "1234", ZERO_UUID, other.team.general_channel_id, "%20"];
    for (const id of ids) {
      for (
        const [method, path] of [
          ["GET", `/channels/${id}`],
          ["POST", `/channels/${id}/archive`],
          ["POST", `/channels/${id}/unarchive`],
          ["GET", `/channels/${id}/members`],
          ["POST", `/channels/${id}/members`],
          ["DELETE", `/channels/${id}/members/${w.admin.user.id}`],
        ]
      ) {
        const body = method === "POST" ? { user_id: w.member.user.id } : undefined;
        assertStatus(
          await api(s, method, path, { token: w.admin.token, body }),
          404,
          `${method} ${path}`,
        );
      }
    }
    const general = `/channels/${w.team.general_channel_id}`;
    for (const user of ["nope", ZERO_UUID, other.admin.user.id]) {
      const res = await api(s, "DELETE", `${general}/members/${user}`, { token: w.admin.token });
      assertStatus(res, 404, `remove ${user}`);
    }
    assert.equal(await countKeys(s.ctx.kv), before);
  });
});
