/**
 * The event feed's indexes by who may see an event (kv/keys.ts, layout step 1 of 2): every event
 * is indexed by its channel, and by its team when every human of the team sees it; every
 * membership of a private or direct channel is indexed by its user. Written in the commits that
 * make the events and memberships, so that the next release can read them.
 */
import assert from "node:assert/strict";
import { createDirectChannel } from "../domain/channels/channels.ts";
import type { User } from "../core/types.ts";
import { keys } from "../kv/keys.ts";
import { api, assertStatus, createChannelAs, storeEntries, withWorkspace } from "./harness.ts";
import { post } from "./webhook_receivers.ts";
import type { Store } from "../kv/store/store.ts";

const idsUnder = async (kv: Store, prefix: Deno.KvKey) =>
  (await Array.fromAsync(storeEntries(kv, prefix))).map((e) => e.key.at(-1));

Deno.test("feed indexes: an event is indexed by its channel, and by its team where all humans see it", async () => {
  await withWorkspace(async (s, w) => {
    const general = w.team.general_channel_id;
    const secret = await createChannelAs(s, w.admin.token, "secret", "private");
    const seen = (await post(s, w.admin.token, general, "for everyone")).id;
    const hidden = (await post(s, w.admin.token, secret, "for members")).id;
    const events = await Array.fromAsync(storeEntries(s.ctx.kv, keys.events()));
    const eventOf = (messageId: string) =>
      events.find((e) => (e.value as { data: { id: string } }).data.id === messageId)!.key[1];
    const [open, closed] = [eventOf(seen), eventOf(hidden)];

    assert.deepEqual(await idsUnder(s.ctx.kv, ["channel_events", general]), [open]);
    assert.deepEqual(await idsUnder(s.ctx.kv, ["channel_events", secret]), [closed]);
    assert.deepEqual(await idsUnder(s.ctx.kv, ["open_events", w.team.id]), [open]);
    const entry = await s.ctx.kv.get(keys.openEvent(w.team.id, open as string));
    assert.deepEqual(entry.value, { type: "message.created", channel_id: general });
  });
});

Deno.test("feed indexes: memberships of private and direct channels are indexed by their user", async () => {
  await withWorkspace(async (s, w) => {
    const secret = await createChannelAs(s, w.admin.token, "secret", "private");
    const room = await createChannelAs(s, w.admin.token, "room", "public");
    const closedOf = (user: User) => idsUnder(s.ctx.kv, ["user_closed_channels", user.id]);
    assert.deepEqual(await closedOf(w.admin.user), [secret], "its creator's, not a public one's");
    assertStatus(
      await api(s, "POST", `/channels/${secret}/members`, {
        token: w.admin.token,
        body: { user_id: w.member.user.id },
      }),
      201,
    );
    assert.deepEqual(await closedOf(w.member.user), [secret]);
    assertStatus(
      await api(s, "DELETE", `/channels/${secret}/members/${w.member.user.id}`, {
        token: w.member.token,
      }),
      204,
    );
    assert.deepEqual(await closedOf(w.member.user), [], "gone with the membership");
    const dm = await createDirectChannel(s.ctx, [w.admin.user, w.member.user]);
    assert.deepEqual(await closedOf(w.member.user), [dm.id]);
    assert.deepEqual((await closedOf(w.admin.user)).sort(), [dm.id, secret].sort());
    assert.ok(!(await closedOf(w.admin.user)).includes(room));
  });
});
