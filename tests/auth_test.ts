import assert from "node:assert/strict";
import { ApiError } from "../core/errors.ts";
import { listAudit } from "../kv/audit.ts";
import { keys } from "../kv/keys.ts";
import { migrate } from "../kv/store/migrations.ts";
import {
  createToken,
  listTokens,
  revokeTokenById,
  rotateTokenById,
} from "../domain/people/tokens.ts";
import { isWellFormedToken, mintTokenValue } from "../domain/people/token_format.ts";
import { sha256Hex } from "../core/random.ts";
import { type Scope, SCOPES, type Token } from "../core/types.ts";
import { newId } from "../core/ids.ts";
import type { Delivery } from "../core/webhook_records.ts";
import {
  actor,
  api,
  countKeys,
  createChannelAs,
  startServer,
  storeEntries,
  type TestServer,
  withWorkspace,
  workspace,
} from "./harness.ts";
import { post, subscribe } from "./webhook_receivers.ts";
import type { Store } from "../kv/store/store.ts";
import { subjectOfPerson } from "../domain/principals.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import { wrapStore } from "../kv/store/open.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function tokenRecord(s: TestServer, value: string) {
  return await s.ctx.kv.get<Token>(keys.token(sha256Hex(value)));
}

/** Every key and value in the store, as text. */
/** The store as a string, once the event log writes that follow a commit have landed. */
async function dumpKv(kv: Store): Promise<string> {
  await kv.settled();
  const parts: string[] = [];
  for await (const e of storeEntries(kv)) {
    parts.push(JSON.stringify([e.key, e.value], (_k, v) => typeof v === "bigint" ? `${v}` : v));
  }
  return parts.join("\n");
}

Deno.test("auth: bot tokens start tcb_, personal tokens tcp_, both carry a checksum", async () => {
  await withWorkspace(async (s, w) => {
    assert.match(w.bot.token, /^tcb_[0-9A-Za-z]{38}$/);
    assert.match(w.admin.token, /^tcp_[0-9A-Za-z]{38}$/);
    assert.ok(isWellFormedToken(w.bot.token));
    for (const token of [w.bot.token, w.admin.token]) {
      const res = await api(s, "GET", "/channels", { token });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    const lower = await api(s, "GET", "/channels", {
      headers: { Authorization: `bearer   ${w.member.token}` },
    });
    assert.equal(lower.status, 200);
  });
});

Deno.test("auth: missing, malformed and unknown tokens get 401 JSON", async () => {
  await withWorkspace(async (s, w) => {
    const t = w.member.token;
    const flipped = t.slice(0, -1) + (t.endsWith("A") ? "B" : "A");
    const headers: (string | undefined)[] = [
      undefined,
      "",
      "Bearer",
      `Basic ${t}`,
      `Bearer ${t} extra`,
      `Bearer ${t.slice(0, -1)}`,
      `Bearer ${t}x`,
      `Bearer tcx_${t.slice(4)}`,
      `Bearer ${flipped}`,
      `Bearer ${mintTokenValue("personal")}`,
      `Bearer ${sha256Hex(t)}`,
    ];
    for (const header of headers) {
      const res = await api(s, "GET", "/channels", {
        headers: header === undefined ? {} : { Authorization: header },
      });
      assert.equal(res.status, 401, `${header}`);
      assert.equal(typeof res.body.message, "string");
      assert.equal(res.headers.get("X-RateLimit-Limit"), null, "no valid token, no rate headers");
      // RFC 6750: the scheme, and invalid_token where credentials were sent.
      assert.equal(
        res.headers.get("WWW-Authenticate"),
        header ? 'Bearer error="invalid_token"' : "Bearer",
        `${header}`,
      );
    }
  });
});

Deno.test("auth: a token with a broken checksum is refused without reading KV", async () => {
  const s = await startServer();
  const w = await workspace(s.ctx);
  const t = w.bot.token;
  const broken = t.slice(0, -1) + (t.endsWith("0") ? "1" : "0");
  s.ctx.kv.close();
  try {
    const res = await api(s, "GET", "/channels", { token: broken });
    assert.equal(res.status, 401, "a KV read on a closed store would have answered 500");
    assert.equal(typeof res.body.message, "string");
  } finally {
    await s.close().catch(() => {});
  }
});

Deno.test("auth: token values are stored only as SHA-256 hashes", async () => {
  await withWorkspace(async (s, w) => {
    const rotated = await rotateTokenById(
      s.ctx,
      (await tokenRecord(s, w.member.token)).value!.id,
      subjectOfPerson(w.member.user),
    );
    const values = [w.admin.token, w.member.token, w.bot.token, rotated.value];
    assert.equal((await api(s, "GET", "/channels", { token: rotated.value })).status, 200);
    const dump = await dumpKv(s.ctx.kv);
    for (const v of values) {
      assert.ok(!dump.includes(v.slice(4, 36)), "no token value, nor its random part, in KV");
      const stored = await tokenRecord(s, v);
      assert.ok(stored.value, "the token is found by the hash of its value");
      assert.equal(stored.value.hash, sha256Hex(v));
    }
  });
});

Deno.test("auth: an expired token is 401 like a revoked one", async () => {
  await withWorkspace(async (s, w) => {
    const { value, token } = await createToken(s.ctx, w.member.user, {
      scopes: ["channels:read"],
      expiresInSeconds: 1,
      actor: subjectOfPerson(w.member.user),
    });
    assert.ok(token.expires_at);
    assert.equal((await api(s, "GET", "/channels", { token: value })).status, 200);
    await sleep(Date.parse(token.expires_at) - Date.now() + 20);
    const res = await api(s, "GET", "/channels", { token: value });
    assert.equal(res.status, 401);
    assert.equal(typeof res.body.message, "string");
  });
});

Deno.test("auth: an expired token can't be rotated into a live one, as a revoked one can't", async () => {
  await withWorkspace(async (s, w) => {
    const { token } = await createToken(s.ctx, w.member.user, {
      scopes: ["channels:read"],
      expiresInSeconds: 1,
      actor: subjectOfPerson(w.member.user),
    });
    await sleep(Date.parse(token.expires_at!) - Date.now() + 20);
    await assert.rejects(
      () => rotateTokenById(s.ctx, token.id, subjectOfPerson(w.member.user)),
      (e) => e instanceof ApiError && e.status === 422 && /expired/.test(e.message),
    );
  });
});

Deno.test("auth: revocation works on the very next request", async () => {
  await withWorkspace(async (s, w) => {
    const id = (await tokenRecord(s, w.bot.token)).value!.id;
    assert.equal((await api(s, "GET", "/channels", { token: w.bot.token })).status, 200);
    await revokeTokenById(s.ctx, id, subjectOfPerson(w.admin.user));
    assert.equal((await api(s, "GET", "/channels", { token: w.bot.token })).status, 401);
    await assert.rejects(
      revokeTokenById(s.ctx, id, null),
      (e: { status: number }) => e.status === 422,
    );
  });
});

Deno.test("auth: rotation issues a new value and the old one stops at once", async () => {
  await withWorkspace(async (s, w) => {
    const old = (await tokenRecord(s, w.bot.token)).value!;
    const next = await rotateTokenById(s.ctx, old.id, subjectOfPerson(w.admin.user));
    assert.notEqual(next.token.id, old.id);
    assert.match(next.value, /^tcb_/);
    assert.deepEqual(next.token.scopes, old.scopes);
    assert.equal((await api(s, "GET", "/channels", { token: w.bot.token })).status, 401);
    assert.equal((await api(s, "GET", "/channels", { token: next.value })).status, 200);
    await assert.rejects(
      rotateTokenById(s.ctx, old.id, null),
      (e: { status: number }) => e.status === 422,
    );
  });
});

Deno.test("auth: token lifecycle is audited, without the token value", async () => {
  await withWorkspace(async (s, w) => {
    const made = await createToken(s.ctx, w.member.user, {
      scopes: ["channels:read"],
      name: "ci",
      actor: subjectOfPerson(w.member.user),
    });
    const rotated = await rotateTokenById(s.ctx, made.token.id, subjectOfPerson(w.member.user));
    await revokeTokenById(s.ctx, rotated.token.id, null);
    const entries = await listAudit(s.ctx.kv, w.team.id, 3);
    assert.deepEqual(
      entries.map((e) => [e.action, e.actor_id, e.actor_type, e.target_id]),
      [
        ["token.revoked", null, "system", rotated.token.id],
        ["token.rotated", w.member.user.id, "user", made.token.id],
        ["token.created", w.member.user.id, "user", made.token.id],
      ],
    );
    // Names are kept beside the ids (issue 18: the log names who acted and on what).
    assert.deepEqual(
      entries.map((e) => [e.actor_name, e.target_name]),
      [
        ["operator (CLI)", "Mo Member's token “ci”"],
        ["Mo Member", "Mo Member's token “ci”"],
        ["Mo Member", "Mo Member's token “ci”"],
      ],
    );
    for (const e of entries) {
      assert.deepEqual(
        Object.keys(e).sort(),
        [
          "action",
          "actor_id",
          "actor_name",
          "actor_type",
          "created_at",
          "id",
          "target_id",
          "target_name",
          "team_id",
        ],
      );
    }
    const text = JSON.stringify(await listAudit(s.ctx.kv, w.team.id, 100));
    for (const v of [made.value, rotated.value, w.admin.token, w.bot.token]) {
      assert.ok(!text.includes(v.slice(4, 36)));
    }
  });
});

interface Endpoint {
  method: string;
  path: string;
  scope: Scope;
  body?: unknown;
  ok: number;
}

/** Every channels/members endpoint, in an order where each call can succeed. */
function endpoints(channelId: string, userId: string): Endpoint[] {
  const ch = `/channels/${channelId}`;
  return [
    { method: "GET", path: "/channels", scope: "channels:read", ok: 200 },
    {
      method: "POST",
      path: "/channels",
      scope: "channels:write",
      body: { name: "scoped", visibility: "public" },
      ok: 201,
    },
    { method: "GET", path: ch, scope: "channels:read", ok: 200 },
    { method: "GET", path: `${ch}/members`, scope: "members:read", ok: 200 },
    {
      method: "POST",
      path: `${ch}/members`,
      scope: "members:write",
      body: { user_id: userId },
      ok: 201,
    },
    { method: "DELETE", path: `${ch}/members/${userId}`, scope: "members:write", ok: 204 },
    { method: "POST", path: `${ch}/archive`, scope: "channels:write", ok: 200 },
    { method: "POST", path: `${ch}/unarchive`, scope: "channels:write", ok: 200 },
  ];
}

Deno.test("auth: each endpoint needs its one scope; every other scope gets 403", async () => {
  await withWorkspace(async (s, w) => {
    const made = await api(s, "POST", "/channels", {
      token: w.admin.token,
      body: { name: "ops", visibility: "private" },
    });
    const list = endpoints(made.body.data.id, w.member.user.id);
    // Each token is revoked once the next is made: nobody may hold more than 25 live tokens.
    let previous: string | null = null;
    const tokenWith = async (scopes: Scope[]) => {
      if (previous) await revokeTokenById(s.ctx, previous, null);
      const made = await createToken(s.ctx, w.admin.user, { scopes, actor: null });
      previous = made.token.id;
      return made.value;
    };
    for (const e of list) {
      const others = await tokenWith(SCOPES.filter((x) => x !== e.scope));
      const refused = await api(s, e.method, e.path, { token: others, body: e.body });
      assert.equal(refused.status, 403, `${e.method} ${e.path} without ${e.scope}`);
      assert.ok(refused.body.message.includes(e.scope), refused.body.message);
      const only = await tokenWith([e.scope]);
      const allowed = await api(s, e.method, e.path, { token: only, body: e.body });
      assert.equal(allowed.status, e.ok, `${e.method} ${e.path} with ${e.scope}`);
    }
    for (const scope of SCOPES) {
      const only = await tokenWith([scope]);
      for (const e of list.filter((x) => x.scope !== scope)) {
        const res = await api(s, e.method, e.path, { token: only, body: e.body });
        assert.equal(res.status, 403, `${e.method} ${e.path} with only ${scope}`);
      }
    }
  });
});

Deno.test("auth: last_used_at is written at most once a minute per token", async () => {
  await withWorkspace(async (s, w) => {
    const { value } = await createToken(s.ctx, w.member.user, {
      scopes: ["channels:read"],
      actor: null,
    });
    const before = await tokenRecord(s, value);
    assert.equal(before.value!.last_used_at, null);
    const startedAt = Date.now();
    await api(s, "GET", "/channels", { token: value });
    await api(s, "GET", "/channels", { token: value });
    let touched = await tokenRecord(s, value);
    for (let i = 0; i < 50 && touched.value!.last_used_at === null; i++) {
      await sleep(10);
      touched = await tokenRecord(s, value);
    }
    const usedAt = Date.parse(touched.value!.last_used_at!);
    assert.ok(usedAt >= startedAt - 5 && usedAt <= Date.now(), touched.value!.last_used_at!);
    for (let i = 0; i < 5; i++) await api(s, "GET", "/channels", { token: value });
    await sleep(50);
    const after = await tokenRecord(s, value);
    assert.equal(after.versionstamp, touched.versionstamp, "no further write within the minute");
  });
});

Deno.test("auth: concurrent rotations leave exactly one live successor", async () => {
  await withWorkspace(async (s, w) => {
    const id = (await tokenRecord(s, w.bot.token)).value!.id;
    const results = await Promise.allSettled(
      [1, 2, 3, 4].map(() => rotateTokenById(s.ctx, id, subjectOfPerson(w.admin.user))),
    );
    const made = results.flatMap((r) => r.status === "fulfilled" ? [r.value] : []);
    assert.equal(made.length, 1, "one rotation wins");
    for (const r of results) {
      if (r.status === "rejected") assert.equal(r.reason.status, 422, String(r.reason));
    }
    assert.equal((await api(s, "GET", "/channels", { token: made[0].value })).status, 200);
    const live: string[] = [];
    for await (const e of s.ctx.kv.list<Partial<Token>>({ prefix: [] })) {
      const t = e.value;
      if (t?.hash && t.user_id === w.bot.user.id && !t.revoked_at) live.push(t.id!);
    }
    assert.deepEqual(live, [made[0].token.id]);
    const rotations = (await listAudit(s.ctx.kv, w.team.id, 100))
      .filter((e) => e.action === "token.rotated");
    assert.equal(rotations.length, 1);
  });
});

Deno.test("auth: concurrent revocations write one audit entry", async () => {
  await withWorkspace(async (s, w) => {
    const id = (await tokenRecord(s, w.member.token)).value!.id;
    const results = await Promise.allSettled([1, 2, 3].map(() => revokeTokenById(s.ctx, id, null)));
    assert.deepEqual(results.map((r) => r.status).sort(), ["fulfilled", "rejected", "rejected"]);
    const revocations = (await listAudit(s.ctx.kv, w.team.id, 100))
      .filter((e) => e.action === "token.revoked");
    assert.equal(revocations.length, 1);
  });
});

Deno.test("auth: a remembered token revoked elsewhere gets 401 on its very next read or write", async () => {
  await withWorkspace(async (s, w) => {
    const general = w.team.general_channel_id;
    const reads = [`/channels/${general}`, `/channels/${general}/messages`, "/channels"];
    for (const path of reads) {
      assert.equal((await api(s, "GET", path, { token: w.member.token })).status, 200, path);
    }
    const token = await s.ctx.kv.get<Token>(keys.token(sha256Hex(w.member.token)));
    await revokeTokenById(s.ctx, token.value!.id, null);
    for (const path of [...reads, `/channels/00000000-0000-7000-8000-000000000000`]) {
      assert.equal((await api(s, "GET", path, { token: w.member.token })).status, 401, path);
    }
    const before = await s.ctx.kv.get(keys.timelineLen(general));
    const post = await api(s, "POST", `/channels/${general}/messages`, {
      token: w.member.token,
      body: { body: "must not land" },
    });
    assert.equal(post.status, 401);
    assert.deepEqual(await s.ctx.kv.get(keys.timelineLen(general)), before);
  });
});

Deno.test("auth: every write with a remembered token revoked elsewhere is 401 and writes nothing", async () => {
  await withWorkspace(async (s, w) => {
    const general = w.team.general_channel_id;
    const open = await createChannelAs(s, w.admin.token, "open");
    const shut = await createChannelAs(s, w.admin.token, "shut");
    const crew = await createChannelAs(s, w.admin.token, "crew");
    assert.equal(
      (await api(s, "POST", `/channels/${shut}/archive`, { token: w.admin.token })).status,
      200,
    );
    const message = await post(s, w.admin.token, general, "hello");
    const msg = `/channels/${general}/messages/${message.id}`;
    const hook = await subscribe(s, w.admin.token, "http://127.0.0.1:9/hook");
    const delivery: Delivery = {
      id: newId(),
      subscription_id: hook.id,
      event_id: newId(),
      event_type: "message.created",
      attempt: 1,
      succeeded: false,
      response_status: 500,
      error: null,
      created_at: new Date().toISOString(),
    };
    await s.ctx.kv.set(keys.event(delivery.event_id), { id: delivery.event_id });
    await s.ctx.kv.set(keys.delivery(hook.id, delivery.id), delivery);
    const writes: [string, string, unknown?][] = [
      ["POST", "/channels", { name: "new", visibility: "public" }],
      ["POST", `/channels/${open}/archive`],
      ["POST", `/channels/${shut}/unarchive`],
      ["POST", `/channels/${crew}/members`, { user_id: w.member.user.id }],
      ["DELETE", `/channels/${crew}/members/${w.member.user.id}`],
      ["POST", `/channels/${general}/messages`, { body: "must not land" }],
      ["PATCH", msg, { body: "edited" }],
      ["PUT", `${msg}/reactions/${encodeURIComponent("👍")}`],
      ["DELETE", `${msg}/reactions/${encodeURIComponent("👍")}`],
      ["DELETE", msg],
      ["POST", "/webhooks", {
        name: "h",
        url: "http://127.0.0.1:9/h",
        events: ["message.created"],
      }],
      ["POST", `/webhooks/${hook.id}/deliveries/${delivery.id}/redeliver`],
      ["DELETE", `/webhooks/${hook.id}`],
    ];
    for (const [method, path, body] of writes) {
      const admin = await actor(s.ctx, w.team, "Second Admin", "admin");
      await api(s, "GET", "/channels", { token: admin.token });
      const token = await tokenRecord(s, admin.token);
      await revokeTokenById(s.ctx, token.value!.id, null);
      const before = await dumpKv(s.ctx.kv);
      const res = await api(s, method, path, { token: admin.token, body });
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(await dumpKv(s.ctx.kv), before, `${method} ${path} wrote`);
      const live = await api(s, method, path, { token: w.admin.token, body });
      assert.ok(live.status < 300, `${method} ${path} with a live token: ${live.status}`);
    }
  }, { WEBHOOKS_ALLOW_PRIVATE_URLS: "true" });
});

Deno.test("auth: tokens made before the per-user index are listed after the migration", async () => {
  await withWorkspace(async (s, w) => {
    const made = await createToken(s.ctx, w.member.user, {
      scopes: ["channels:read"],
      actor: null,
    });
    await s.ctx.kv.delete(keys.userToken(w.member.user.id, made.token.id));
    const listed = async () => (await listTokens(s.ctx, w.member.user.id)).map((t) => t.id);
    assert.equal((await listed()).includes(made.token.id), false, "as a store of before");
    await migrate(s.ctx.kv);
    assert.equal((await listed()).includes(made.token.id), true);
    await s.ctx.kv.delete(keys.userToken(w.member.user.id, made.token.id));
    await migrate(s.ctx.kv);
    assert.equal((await listed()).includes(made.token.id), false, "a migration runs once");
  });
});

Deno.test("auth: decided before the handler runs: a token revoked elsewhere writes nothing, however recently it was used", async () => {
  const dir = await Deno.makeTempDir({ prefix: "auth-before-" });
  const path = `${dir}/kv.sqlite3`;
  const s = await startServer({ KV_PATH: path });
  // Another process on the same file: it revokes, this one serves.
  const other = wrapStore(await Deno.openKv(path), path);
  try {
    const w = await workspace(s.ctx);
    const channel = w.team.general_channel_id;
    const say = (body: string) =>
      api(s, "POST", `/channels/${channel}/messages`, { token: w.admin.token, body: { body } });
    for (let i = 0; i < 3; i++) assert.equal((await say(`warm ${i}`)).status, 201);
    const [token] = await listTokens({ ...s.ctx, kv: other }, w.admin.user.id);
    await revokeTokenById({ ...s.ctx, kv: other }, token.id, null);
    const before = await countKeys(s.ctx.kv, keys.timeline(channel));
    for (const what of ["a post", "another"]) {
      const res = await say(what);
      assert.equal(res.status, 401, what);
    }
    assert.equal(await countKeys(s.ctx.kv, keys.timeline(channel)), before, "nothing was written");
    // What a handler gets is decided: a subject carries no check left to settle.
    const subject = await authenticate(s.ctx, w.member.token);
    assert.deepEqual(Object.keys(subject).sort(), [
      "name",
      "role",
      "scopes",
      "team_id",
      "token_hash",
      "token_id",
      "type",
      "user_id",
    ]);
  } finally {
    other.close();
    await s.close();
    await Deno.remove(dir, { recursive: true });
  }
});
