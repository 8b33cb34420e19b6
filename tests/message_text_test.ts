/**
 * A message's rendered `text` beside its `body` (issue 57): Slack's markup made readable, people
 * and public channels by name, a private channel by its label or `#private-channel`; kept in
 * step with edits, empty on a tombstone, and carried by the message's events.
 */
import assert from "node:assert/strict";
import { api, assertStatus, startServer, workspace } from "./harness.ts";
import { createChannel } from "../domain/channels/channels.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import { waitUntil } from "./webhook_receivers.ts";

Deno.test("message text: mentions by name as any reader may see them, in step with edits", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const admin = await authenticate(s.ctx, w.admin.token);
    const open = await createChannel(s.ctx, admin, { name: "launch", visibility: "public" });
    const closed = await createChannel(s.ctx, admin, { name: "secret", visibility: "private" });
    const general = w.team.general_channel_id;
    const body = `Hi <@${w.member.user.id}>, see <#${open.id}>, <#${closed.id}> and ` +
      `<#${closed.id}|plans>; <https://example.com|the site> &lt;b&gt; <!here>`;
    const posted = await api(s, "POST", `/channels/${general}/messages`, {
      token: w.admin.token,
      body: { body },
    });
    assertStatus(posted, 201, "posted");
    assert.equal(posted.body.data.body, body);
    assert.equal(
      posted.body.data.text,
      "Hi @Mo Member, see #launch, #private-channel and #plans; the site (https://example.com) <b> @here",
    );

    const path = `/channels/${general}/messages/${posted.body.data.id}`;
    const edited = await api(s, "PATCH", path, {
      token: w.admin.token,
      body: { body: `Now <@${w.admin.user.id}> only` },
    });
    assert.equal(edited.body.data.text, "Now @Ada Admin only");
    const read = await api(s, "GET", path, { token: w.member.token });
    assert.equal(read.body.data.text, "Now @Ada Admin only");

    // The feed lists what settled: the edit's event shows within moments.
    let updated: { data: { text: string } } | undefined;
    await waitUntil(
      async () => {
        const events = await api(s, "GET", "/events?limit=100", { token: w.member.token });
        updated = events.body.data.find((e: { type: string }) => e.type === "message.updated");
        return updated !== undefined;
      },
      5_000,
      "the edit's event in the feed",
    );
    assert.equal(updated!.data.text, "Now @Ada Admin only");

    assertStatus(await api(s, "DELETE", path, { token: w.admin.token }), 204, "deleted");
    const gone = await api(s, "GET", path, { token: w.member.token });
    assert.equal(gone.body.data.text, "");

    const plain = await api(s, "POST", `/channels/${general}/messages`, {
      token: w.admin.token,
      body: { body: "nothing to render" },
    });
    assert.equal(plain.body.data.text, "nothing to render");
  } finally {
    await s.close();
  }
});

Deno.test("message text: a message of blocks alone names the people its blocks mention", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const general = w.team.general_channel_id;
    const mo = w.member.user.id;
    const posted = await api(s, "POST", `/channels/${general}/messages`, {
      token: w.admin.token,
      body: {
        blocks: [
          { type: "section", text: { type: "mrkdwn", text: `Ping <@${mo}>` } },
          {
            type: "rich_text",
            elements: [{
              type: "rich_text_section",
              elements: [{ type: "text", text: "and " }, { type: "user", user_id: mo }],
            }],
          },
        ],
      },
    });
    assertStatus(posted, 201, "posted");
    assert.equal(posted.body.data.body, `Ping <@${mo}>\nand <@${mo}>`);
    assert.equal(posted.body.data.text, "Ping @Mo Member\nand @Mo Member");
  } finally {
    await s.close();
  }
});
