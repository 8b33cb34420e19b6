/**
 * Slack's shapes where apps rely on them (decisions.md, "Slack's shapes"): what the Web API answers
 * about a deleted message, as Slack's clients test for it.
 */
import assert from "node:assert/strict";
import { startServer, workspace } from "./harness.ts";
import { post } from "./webhook_receivers.ts";
import { createToken } from "../domain/people/tokens.ts";

Deno.test("slack shapes: #name for a channel; chat.update of a deleted message is message_not_found", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const channel = w.team.general_channel_id;
    const call = (method: string, args: Record<string, unknown>) =>
      fetch(`${s.url}/api/slack/${method}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${w.admin.token}`, "Content-Type": "application/json" },
        body: JSON.stringify(args),
      }).then((r) => r.json());
    // `#name` wherever Slack takes a channel's id.
    const named = await call("chat.postMessage", { channel: "#general", text: "by name" });
    assert.deepEqual([named.ok, named.channel], [true, channel]);
    const unknown = await call("chat.postMessage", { channel: "#nowhere", text: "x" });
    assert.equal(unknown.error, "channel_not_found");
    const message = await post(s, w.admin.token, channel, "soon gone");
    assert.equal((await call("chat.delete", { channel, ts: message.ts })).ok, true);
    const updated = await call("chat.update", { channel, ts: message.ts, text: "back?" });
    assert.deepEqual([updated.ok, updated.error], [false, "message_not_found"]);
  } finally {
    await s.close();
  }
});

Deno.test("slack shapes: missing_scope names the Slack scope a developer asks for", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const reader = await createToken(s.ctx, w.member.user, {
      scopes: ["channels:read"],
      actor: null,
    });
    const call = (method: string, args: Record<string, unknown>) =>
      fetch(`${s.url}/api/slack/${method}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${reader.value}`, "Content-Type": "application/json" },
        body: JSON.stringify(args),
      }).then((r) => r.json());
    const post = await call("chat.postMessage", { channel: w.team.general_channel_id, text: "x" });
    assert.deepEqual(
      [post.error, post.needed, post.response_metadata.scopes],
      ["missing_scope", "chat:write", ["messages:write"]],
    );
    const open = await call("conversations.open", { users: w.admin.user.id });
    assert.deepEqual([open.error, open.needed], ["missing_scope", "im:write"]);
  } finally {
    await s.close();
  }
});
