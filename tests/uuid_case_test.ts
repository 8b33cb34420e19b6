/**
 * A UUID names the same record in any case (RFC 9562 reads them so): in a path, a body, a query
 * and a CLI flag, each is read as ids are stored. Before, a channel's path took only lowercase
 * while a user's took either.
 */
import assert from "node:assert/strict";
import { api, createChannelAs, withWorkspace } from "./harness.ts";

const upper = (id: string) => id.toUpperCase();

Deno.test("ids: a UUID in any case names the same record", async () => {
  await withWorkspace(async (s, w) => {
    const general = w.team.general_channel_id;
    const as = { token: w.admin.token };
    const channel = await api(s, "GET", `/channels/${upper(general)}`, as);
    assert.equal(channel.status, 200);
    assert.equal(channel.body.data.id, general);

    const posted = await api(s, "POST", `/channels/${upper(general)}/messages`, {
      ...as,
      body: { body: "hello" },
    });
    assert.equal(posted.status, 201);
    const id = posted.body.data.id;
    const reply = await api(s, "POST", `/channels/${general}/messages`, {
      ...as,
      body: { body: "a reply", thread_root_id: upper(id) },
    });
    assert.equal(reply.status, 201);
    assert.equal(reply.body.data.thread_root_id, id);
    const shown = await api(s, "GET", `/channels/${upper(general)}/messages/${upper(id)}`, as);
    assert.equal(shown.status, 200);
    const reacted = `/channels/${upper(general)}/messages/${upper(id)}/reactions/%3Atada%3A`;
    const put = await api(s, "PUT", reacted, as);
    assert.equal(put.status, 204, JSON.stringify(put.body));
    const after = await api(s, "GET", `/channels/${general}/messages/${id}`, as);
    assert.equal(after.body.data.reactions.length, 1, JSON.stringify(after.body.data.reactions));

    const room = await createChannelAs(s, w.admin.token, "room");
    const members = `/channels/${upper(room)}/members`;
    const added = await api(s, "POST", members, { ...as, body: { user_id: upper(w.bot.user.id) } });
    assert.ok(added.status < 300, JSON.stringify(added.body));
    const removed = await api(s, "DELETE", `${members}/${upper(w.bot.user.id)}`, as);
    assert.equal(removed.status, 204, JSON.stringify(removed.body));
    const listed = await api(s, "GET", `/events?channel_id=${upper(general)}`, as);
    assert.equal(listed.status, 200);
  });
});
