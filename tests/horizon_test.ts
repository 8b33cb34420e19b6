/**
 * Resuming the stream never skips silently and tells nothing (decisions.md, "Resuming past the
 * horizon"; issue 28 finding 6): an event id the reader can't see, another team's and one never
 * made are answered alike, from the time they carry; a position past the 30 days events are
 * kept is a 410.
 */
import assert from "node:assert/strict";
import { newId } from "../core/ids.ts";
import { keys } from "../kv/keys.ts";
import { createChannelAs, storeEntries, withWorkspace, workspace } from "./harness.ts";
import { connect } from "./sse_client.ts";
import { post } from "./webhook_receivers.ts";

/** An id as one made at `ms` would be (newId never goes back in time). */
const idAt = (ms: number) => {
  const hex = ms.toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8)}${newId().slice(13)}`;
};

Deno.test("horizon: a hidden, a foreign and an unknown id resume the stream alike; past 30 days, 410", async () => {
  await withWorkspace(async (s, w) => {
    const stream = `${s.url}/api/v1/events/stream?types=message.created`;
    const general = w.team.general_channel_id;
    const secret = await createChannelAs(s, w.admin.token, "secret", "private");
    const other = await workspace(s.ctx, "Other");
    await post(s, w.admin.token, general, "p0");
    const hidden = await post(s, w.admin.token, secret, "s0");
    const foreign = await post(s, other.admin.token, other.team.general_channel_id, "o0");
    await post(s, w.admin.token, general, "p1");
    const eventOf = async (messageId: string) => {
      for await (const e of storeEntries(s.ctx.kv, keys.events())) {
        if ((e.value as { data: { id: string } }).data.id === messageId) return e.key[1] as string;
      }
      throw new Error("no event");
    };
    const [hiddenId, foreignId] = [await eventOf(hidden.id), await eventOf(foreign.id)];
    const unknownId = idAt(Number.parseInt(hiddenId.slice(0, 8) + hiddenId.slice(9, 13), 16));
    const resumed = async (after: string) => {
      const c = await connect(`${stream}&after=${after}`, w.member.token);
      assert.equal(c.status, 200, `after ${after}`);
      const got = await c.waitFor(2);
      await c.close();
      return got.map((e) => e.data.data.body);
    };
    const [a, b, c] = [await resumed(hiddenId), await resumed(unknownId), await resumed(foreignId)];
    assert.deepEqual(a, ["p0", "p1"], "from a little before its time: nothing after it skipped");
    assert.deepEqual(b, a, "an unknown id, alike");
    assert.deepEqual(c, a, "another team's, alike");

    const old = await connect(
      `${stream}&after=${idAt(Date.now() - 31 * 86_400_000)}`,
      w.member.token,
    );
    assert.equal(old.status, 410);
    assert.match((old.body as { message: string }).message, /30 days/);
    const oldSse = `${"0".repeat(20)}_${idAt(Date.now() - 31 * 86_400_000)}`;
    const viaHeader = await connect(stream, w.member.token, { lastEventId: oldSse });
    assert.equal(viaHeader.status, 410, "a stream id past the horizon too");
  });
});
