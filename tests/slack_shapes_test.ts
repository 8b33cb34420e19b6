/**
 * Slack's shapes where apps rely on them (decisions.md, "Slack's shapes"): what the Web API answers
 * about a deleted message, as Slack's clients test for it.
 */
import assert from "node:assert/strict";
import { startServer, workspace } from "./harness.ts";
import { post } from "./webhook_receivers.ts";

Deno.test("slack shapes: chat.update of a deleted message is message_not_found", async () => {
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
    const message = await post(s, w.admin.token, channel, "soon gone");
    assert.equal((await call("chat.delete", { channel, ts: message.ts })).ok, true);
    const updated = await call("chat.update", { channel, ts: message.ts, text: "back?" });
    assert.deepEqual([updated.ok, updated.error], [false, "message_not_found"]);
  } finally {
    await s.close();
  }
});
