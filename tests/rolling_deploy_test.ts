/**
 * A rolling deploy (decisions.md, "Rolling upgrades"; issue 28 finding 4): the release before
 * this one (the `previous` of tests/fixtures/make_fixtures.ts, kept as its release.tar.gz) and this one run side by side
 * on one store, under load. Every post, through either, reaches the feed and the live stream of
 * both, and the subscription; a token revoked through one is refused by both, and a sign-in link
 * used through one can't be used through the other. This test is what proves that each layout
 * change was made in two steps.
 */
import assert from "node:assert/strict";
import { VERSION } from "../core/version.ts";
import type { Delivery } from "../core/webhook_records.ts";
import type { Ctx } from "../domain/context.ts";
import { keys } from "../kv/keys.ts";
import { RELEASES } from "./fixtures/make_fixtures.ts";
import { workspace } from "./harness.ts";
import { cli, type Service, sharedStore, startService, unpackRelease } from "./processes.ts";
import { connect } from "./sse_client.ts";
import { receiver, sleep, waitUntil } from "./webhook_receivers.ts";

const PREVIOUS = RELEASES.find((r) => r.previous)!;
const POSTS_PER_INSTANCE = 150;

async function postTo(s: Service, token: string, channel: string, body: string) {
  const res = await fetch(`${s.url}/api/v1/channels/${channel}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ body }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()).data.id as string;
}

/** Every message.created event the feed of `s` lists for `token`, walked to the end. */
async function feedOf(s: Service, token: string): Promise<string[]> {
  const ids: string[] = [];
  let after: string | null = null;
  for (let more = true; more;) {
    const q: string = `limit=100&types=message.created${after ? `&after=${after}` : ""}`;
    const res: Response = await fetch(`${s.url}/api/v1/events?${q}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    ids.push(...body.data.map((e: { data: { id: string } }) => e.data.id));
    after = body.meta.next_cursor ?? after;
    more = body.meta.has_more;
  }
  return ids;
}

/** The status of a request, its body read to the end. */
const statusOf = async (res: Promise<Response>) => {
  const r = await res;
  await r.body?.cancel();
  return r.status;
};

const status = (s: Service, token: string) =>
  statusOf(fetch(`${s.url}/api/v1/channels`, { headers: { Authorization: `Bearer ${token}` } }));

const useLink = (s: Service, url: string) =>
  statusOf(fetch(`${s.url}${new URL(url).pathname}`, { method: "POST", redirect: "manual" }));

/**
 * Each release records attempts in its own layout (keyed by id; from 0.32.0 in a ring of slots):
 * a subscription shows the same latest ones through both, the newest of both layouts.
 */
async function deliveriesShownAlike(
  services: Service[],
  { hookId, store, token }: { hookId: string; store: { ctx: Ctx }; token: string },
) {
  const layouts = [keys.deliveries(hookId), keys.deliverySlots(hookId)];
  const stored: Delivery[] = [];
  for (const prefix of layouts) {
    const records = await Array.fromAsync(store.ctx.kv.list<Delivery>({ prefix }), (e) => e.value);
    assert.ok(records.length > 0, `records under ${prefix[0]}`);
    stored.push(...records);
  }
  const newest = stored.map((d) => d.id).sort().toReversed().slice(0, 20);
  for (const s of services) {
    const res = await fetch(`${s.url}/api/v1/webhooks/${hookId}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const shown = (await res.json()).data.deliveries.map((d: Delivery) => d.id);
    assert.deepEqual(shown, newest, `the latest deliveries through ${s.url}`);
  }
}

Deno.test(`rolling deploy: ${PREVIOUS.name} and this release on one store lose nothing and undo no rule`, async () => {
  const previous = await unpackRelease(PREVIOUS.name);
  const r = receiver(() => new Response(null, { status: 204 }));
  const store = await sharedStore();
  const services: Service[] = [];
  try {
    const old = await startService(store.env, { release: previous });
    services.push(old);
    const w = await workspace(store.ctx);
    const general = w.team.general_channel_id;
    const subscribed = await fetch(`${old.url}/api/v1/webhooks`, {
      method: "POST",
      headers: { Authorization: `Bearer ${w.admin.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "rolling", url: r.url, events: ["message.created"] }),
    });
    const hook = await subscribed.json();
    assert.equal(subscribed.status, 201, JSON.stringify(hook));
    // The new release starts on the store the old one serves: it upgrades it, the old goes on.
    const next = await startService(store.env);
    services.push(next);
    const versionOf = async (s: Service) => (await (await fetch(`${s.url}/`)).json()).version;
    assert.deepEqual([await versionOf(old), await versionOf(next)], [PREVIOUS.name, VERSION]);

    const streams = await Promise.all(
      [old, next].map((s) =>
        connect(`${s.url}/api/v1/events/stream?types=message.created`, w.member.token)
      ),
    );
    const posted: string[] = [];
    const worker = (s: Service, k: number) => async () => {
      for (let i = 0; i < POSTS_PER_INSTANCE / 3; i++) {
        posted.push(
          await postTo(s, w.admin.token, general, `${s === old ? "old" : "new"} ${k}.${i}`),
        );
      }
    };
    await Promise.all([0, 1, 2].flatMap((k) => [worker(old, k)(), worker(next, k)()]));
    const all = new Set(posted);
    assert.equal(all.size, 2 * POSTS_PER_INSTANCE);

    for (const [n, stream] of streams.entries()) {
      await stream.waitFor(all.size, 20_000).catch((e) => {
        throw new Error(`the live stream of the ${n ? "new" : "old"} release: ${e.message}`);
      });
      const got = stream.events.map((e) => e.data.data.id as string);
      assert.equal(new Set(got).size, got.length, "nothing twice");
      assert.deepEqual(
        new Set(got),
        all,
        `the ${n ? "new" : "old"} release's stream has every post`,
      );
      await stream.close();
    }
    await waitUntil(
      () => new Set(r.hits.map((h) => JSON.parse(h.body).data.id)).size >= all.size,
      30_000,
      "every delivery",
    );
    await sleep(5_100);
    await deliveriesShownAlike([old, next], { hookId: hook.data.id, store, token: w.admin.token });
    for (const s of [old, next]) {
      const feed = await feedOf(s, w.member.token);
      assert.deepEqual(new Set(feed), all, `the feed through ${s === old ? "old" : "new"}`);
      assert.equal(feed.length, all.size, "each once");
    }

    // A channel list this release keeps in memory is never stale for what the other changed:
    // a channel made, archived, joined and left through either shows at once through both.
    for (const [through, other] of [[old, next], [next, old]]) {
      const listed = async (s: Service) => {
        const res = await fetch(`${s.url}/api/v1/channels?limit=100`, {
          headers: { Authorization: `Bearer ${w.member.token}` },
        });
        const { data } = await res.json();
        return data.map((c: { name: string; is_archived: boolean }) =>
          `${c.name}${c.is_archived ? " (archived)" : ""}`
        ).sort();
      };
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${through.url}/api/v1${path}`, {
          method,
          headers: {
            Authorization: `Bearer ${w.member.token}`,
            "Content-Type": "application/json",
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        assert.ok(res.ok, `${method} ${path}: ${res.status} ${await res.clone().text()}`);
        return res.status === 204 ? null : (await res.json()).data;
      };
      const before = await listed(other);
      assert.deepEqual(await listed(through), before);
      const tag = through === old ? "old" : "new";
      const kept = await call("POST", "/channels", { name: `kept-${tag}`, visibility: "public" });
      const gone = await call("POST", "/channels", { name: `gone-${tag}`, visibility: "public" });
      assert.deepEqual(await listed(other), [...before, kept.name, gone.name].sort(), "made");
      await call("POST", `/channels/${kept.id}/archive`);
      await call("DELETE", `/channels/${gone.id}/members/${w.member.user.id}`);
      assert.deepEqual(await listed(other), [...before, `${kept.name} (archived)`].sort());
    }

    // No rule undone: a token each has just used, revoked, is refused by both; a sign-in link
    // used through one is used through the other.
    for (const [through, other] of [[old, next], [next, old]]) {
      const t = await cli(store.env, "token:create", "--user", w.member.user.id, "--scopes", "all");
      assert.equal(await status(through, t.token), 200);
      assert.equal(await status(other, t.token), 200);
      await cli(store.env, "token:revoke", "--id", t.id);
      assert.equal(await status(through, t.token), 401);
      assert.equal(await status(other, t.token), 401);
      const link = await cli(store.env, "login-link", "--user", w.member.user.id);
      assert.equal(await useLink(through, link.url), 303);
      assert.equal(await useLink(other, link.url), 410, "a used link, through the other release");
    }
  } finally {
    for (const s of services) await s.kill();
    await r.close();
    await store.cleanup();
    await Deno.remove(previous, { recursive: true });
  }
});
