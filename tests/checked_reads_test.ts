/**
 * A post starts from what its process last read for a post (kv/store/checked_reads.ts) and lets its
 * commit's checks catch what changed since. Here another instance on the same KV file makes each
 * change, so nothing in the posting process hears of it but the store.
 */
import assert from "node:assert/strict";
import type { OutboxEvent } from "../core/types.ts";
import { listTokens, revokeTokenById } from "../domain/people/tokens.ts";
import { keys } from "../kv/keys.ts";
import { touchToken } from "../kv/tokens.ts";
import { sha256Hex } from "../core/random.ts";
import {
  api,
  assertStatus,
  countReads,
  createChannelAs,
  startServer,
  type TestServer,
  workspace,
} from "./harness.ts";
import { receiver, subscribe } from "./webhook_receivers.ts";
import { subjectOfPerson } from "../domain/principals.ts";

const postAs = (s: TestServer, token: string, channelId: string, body: string) =>
  api(s, "POST", `/channels/${channelId}/messages`, { token, body: { body } });

async function lastEvent(s: TestServer): Promise<OutboxEvent> {
  const all = await Array.fromAsync(s.ctx.kv.list<OutboxEvent>({ prefix: keys.events() }));
  return all.at(-1)!.value;
}

Deno.test("checked reads: a post reads nothing it read before, and still sees another instance's changes at once", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite3`;
  const a = await startServer({ KV_PATH: path });
  const b = await startServer({ KV_PATH: path });
  const r = receiver();
  try {
    const w = await workspace(a.ctx);
    const secret = await createChannelAs(a, w.admin.token, "secret", "private");
    const members = `/channels/${secret}/members`;
    const admin = { token: w.admin.token };
    assertStatus(
      await api(a, "POST", members, { ...admin, body: { user_id: w.bot.user.id } }),
      201,
    );

    // Every request reads its token before its handler runs; a post reads nothing else it read
    // for the post before.
    assertStatus(await postAs(a, w.bot.token, secret, "first"), 201);
    assertStatus(await postAs(a, w.bot.token, secret, "second"), 201);
    const reads = countReads(a.ctx.kv);
    const tokenOnly = (posts: number) => ({ get: posts, getMany: 0 });
    assertStatus(await postAs(a, w.bot.token, secret, "third"), 201);
    assert.deepEqual(reads, tokenOnly(1), "the third post starts from the second's reads");

    await touchToken(b.ctx.kv, sha256Hex(w.bot.token), new Date().toISOString());
    assertStatus(await postAs(a, w.bot.token, secret, "after a touch"), 201);
    assert.deepEqual(reads, tokenOnly(2), "a token's last use, written elsewhere, changes nothing");

    const uuid = crypto.randomUUID();
    const keyed = { token: w.bot.token, body: { body: "keyed", client_uuid: uuid } };
    const original = await api(a, "POST", `/channels/${secret}/messages`, keyed);
    assertStatus(original, 201);
    assert.deepEqual(reads, tokenOnly(3), "nor does a post with a new client_uuid read more");
    for (const s of [a, b]) {
      const again = await api(s, "POST", `/channels/${secret}/messages`, keyed);
      assertStatus(again, 200, "a resend replays");
      assert.equal(again.body.data.id, original.body.data.id);
    }

    assertStatus(await api(b, "DELETE", `${members}/${w.bot.user.id}`, admin), 204);
    assertStatus(await postAs(a, w.bot.token, secret, "removed"), 404, "after leaving");

    assertStatus(
      await api(b, "POST", members, { ...admin, body: { user_id: w.bot.user.id } }),
      201,
    );
    assertStatus(await postAs(a, w.bot.token, secret, "back"), 201, "after joining again");

    const sub = await subscribe(b, w.admin.token, r.url, { events: ["message.created"] });
    assertStatus(await postAs(a, w.bot.token, secret, "heard"), 201);
    const heard = await a.ctx.kv.get(keys.job(sub.id, (await lastEvent(a)).id));
    assert.notEqual(
      heard.versionstamp,
      null,
      "a new subscription hears (no engine runs: its job waits)",
    );

    const [token] = await listTokens(b.ctx, w.bot.user.id);
    await revokeTokenById(b.ctx, token.id, subjectOfPerson(w.admin.user));
    assertStatus(await postAs(a, w.bot.token, secret, "revoked"), 401, "after revoking");

    assertStatus(await postAs(a, w.admin.token, secret, "before archiving"), 201);
    assertStatus(await api(b, "POST", `/channels/${secret}/archive`, admin), 200);
    assertStatus(await postAs(a, w.admin.token, secret, "archived"), 403, "after archiving");
  } finally {
    await r.close();
    await a.close();
    await b.close();
    await Deno.remove(dir, { recursive: true });
  }
});
