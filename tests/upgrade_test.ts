/**
 * Upgrades tested for real (issue 28): stores made by earlier releases through their own CLI and
 * API (tests/fixtures, built by make_fixtures.ts) are opened by today's service, which upgrades
 * them, and every kind of record still reads and works: tokens (revoked ones stay revoked), pages,
 * threads, reactions, `client_uuid`, incoming hooks, the audit log, and subscriptions whose
 * pending retries go out signed with the secret they had. Sessions and sign-in links are not
 * checked: they expire within a day of the fixture's making, as they are meant to.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { measureBacklog } from "../kv/outbox/backlog.ts";
import { keys } from "../kv/keys.ts";
import { LAYOUT_VERSION, migrate } from "../kv/store/migrations.ts";
import { wrapStore } from "../kv/store/open.ts";
import {
  FIXTURE_APP_KEY,
  FIXTURE_RECEIVER_PORT,
  type Manifest,
  RELEASES,
} from "./fixtures/make_fixtures.ts";
import { cli, startService } from "./processes.ts";
import { waitUntil } from "./webhook_receivers.ts";
import type { Store } from "../kv/store/store.ts";
import { deliveryFaults } from "./event_schema_check.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url).pathname;
/** Events are kept 30 days: a fixture's pending deliveries go out only while their event is. */
const EVENT_DAYS = 30;

for (const release of RELEASES) {
  Deno.test(`upgrade: a store made by the ${release.name} release reads and works`, async () => {
    const manifest: Manifest = JSON.parse(
      await Deno.readTextFile(`${FIXTURES}${release.name}/manifest.json`),
    );
    const dir = await Deno.makeTempDir({ prefix: `upgrade-${release.name}-` });
    const kvPath = `${dir}/kv.sqlite3`;
    await Deno.copyFile(`${FIXTURES}${release.name}/kv.sqlite3`, kvPath);
    const hits: { headers: Headers; body: string }[] = [];
    const receiver = Deno.serve(
      { hostname: "127.0.0.1", port: FIXTURE_RECEIVER_PORT, onListen() {} },
      async (req) => {
        hits.push({ headers: req.headers, body: await req.text() });
        return new Response(null, { status: 204 });
      },
    );
    const env = {
      KV_PATH: kvPath,
      APP_KEY: FIXTURE_APP_KEY,
      WEBHOOKS_ALLOW_PRIVATE_URLS: "true",
      INTEGRATIONS_API_RATE_LIMIT: "100000",
    };
    try {
      // The pending jobs, as the metric counts them once the store is upgraded.
      const kv = wrapStore(await Deno.openKv(kvPath), kvPath, { turns: false });
      await migrate(kv);
      const waiting = await countJobs(kv, manifest.subscription.id);
      assert.equal((await measureBacklog(kv)).pending, waiting);
      kv.close();

      const service = await startService(env);
      try {
        await checkService(service.url, manifest);
        const kept = Date.now() - Date.parse(manifest.made_at) < (EVENT_DAYS - 1) * 86_400_000;
        if (kept) {
          await waitUntil(
            () => hits.length >= manifest.pending_jobs,
            20_000,
            "the pending retries",
          );
          for (const hit of hits) assertSignedWith(manifest.subscription.secret, hit);
          // Events an older release recorded match this release's catalog too.
          assert.deepEqual(hits.map((hit) => deliveryFaults(hit.body)).filter(Boolean), []);
        }
        const audit = await cli(env, "audit:list", "--team", manifest.team_id, "--limit", "1000");
        assert.ok(audit.length >= manifest.audit_entries, "the audit log is all there");
      } finally {
        await service.kill();
      }
    } finally {
      await receiver.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

async function countJobs(kv: Store, subscriptionId: string) {
  let n = 0;
  for await (const _ of kv.list({ prefix: keys.jobs(subscriptionId) })) n++;
  return n;
}

function assertSignedWith(secret: string, hit: { headers: Headers; body: string }) {
  const [t, v1] = hit.headers.get("X-Service-Signature")!.split(",").map((p) =>
    p.slice(p.indexOf("=") + 1)
  );
  assert.equal(v1, createHmac("sha256", secret).update(`${t}.${hit.body}`).digest("hex"));
}

async function checkService(url: string, m: Manifest) {
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const index = await (await fetch(`${url}/`)).json();
  assert.equal(index.store_layout, LAYOUT_VERSION, "upgraded");

  const channels = await call(m.admin.token, "GET", "/channels");
  assert.equal(channels.status, 200);
  const ids = channels.body.data.map((c: { id: string }) => c.id);
  assert.ok(ids.includes(m.general_id) && ids.includes(m.secret_channel_id));
  assert.equal((await call(m.revoked_token, "GET", "/channels")).status, 401, "still revoked");
  assert.equal((await call(m.bot.token, "GET", "/channels")).status, 200);

  const first = await call(m.member.token, "GET", `/channels/${m.general_id}/messages`);
  assert.equal(first.body.data.length, 50);
  assert.ok(first.body.meta.total >= m.general_messages);
  const second = await call(m.member.token, "GET", `/channels/${m.general_id}/messages?page=2`);
  const all = [...first.body.data, ...second.body.data];
  const root = all.find((x: { id: string }) => x.id === m.root_id);
  assert.ok(root, "the thread's root on its page");
  assert.deepEqual(
    root.reactions.map((r: { emoji: string }) => r.emoji).sort(),
    [...m.root_reactions].sort(),
  );
  const thread = await call(
    m.member.token,
    "GET",
    `/channels/${m.general_id}/messages?thread_root_id=${m.root_id}`,
  );
  assert.equal(thread.body.data.length, m.thread_replies);

  const resent = await call(m.admin.token, "POST", `/channels/${m.general_id}/messages`, {
    body: "The root of a thread",
    client_uuid: m.client_uuid,
  });
  assert.equal(resent.body.data.id, m.root_id, "a client_uuid resend finds the original");
  const fresh = await call(m.member.token, "POST", `/channels/${m.general_id}/messages`, {
    body: "after the upgrade",
  });
  assert.equal(fresh.status, 201);

  const sub = await call(m.admin.token, "GET", `/webhooks/${m.subscription.id}`);
  assert.equal(sub.status, 200);
  assert.equal(sub.body.data.status, "active");
  if (m.hook_path) {
    const res = await fetch(`${url}${m.hook_path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ text: "through an old hook" }),
    });
    assert.equal(await res.text(), "ok", "Slack's answer");
  }
  assert.equal((await call(m.member.token, "GET", "/events")).status, 200);
}
