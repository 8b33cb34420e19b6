/**
 * One request frame (issue 68): every request the service sends an app, a command, a press or a
 * menu's options, is framed by the same builder, so they agree on what Slack's requests agree on:
 * a direct message is named `directmessage`, and an app with request URLs but no signing secret is
 * sent nothing (never a request signed with an empty key).
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { api, assertStatus, startServer, workspace } from "./harness.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { directChannelOf } from "../domain/channels/direct.ts";
import { getUser } from "../kv/workspace.ts";
import { keys } from "../kv/keys.ts";
import type { App } from "../core/app_records.ts";

interface Heard {
  payload: Record<string, unknown>;
  signature: string;
  timestamp: string;
  body: string;
}

/** An app's request URL: it records what it hears and offers one option. */
function receiver() {
  const heard: Heard[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const body = await req.text();
    heard.push({
      payload: JSON.parse(new URLSearchParams(body).get("payload") ?? "{}"),
      signature: req.headers.get("X-Slack-Signature") ?? "",
      timestamp: req.headers.get("X-Slack-Request-Timestamp") ?? "",
      body,
    });
    return Response.json({
      options: [{ text: { type: "plain_text", text: "api" }, value: "api" }],
    });
  });
  return {
    heard,
    url: `http://127.0.0.1:${server.addr.port}/slack/events`,
    close: () => server.shutdown(),
  };
}

const MENU = [{
  type: "actions",
  elements: [{
    type: "external_select",
    action_id: "ext",
    placeholder: { type: "plain_text", text: "Pick" },
  }],
}];

Deno.test("request frame: a menu in a direct message names it directmessage, signed as every request is; an app without a signing secret is sent nothing", async () => {
  const s = await startServer({ WEBHOOKS_ALLOW_PRIVATE_URLS: "true" });
  const r = receiver();
  try {
    const w = await workspace(s.ctx);
    const manifest = {
      display_information: { name: "Picker" },
      oauth_config: { scopes: { bot: ["chat:write"] } },
      settings: { interactivity: { is_enabled: true, request_url: r.url } },
    };
    const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest), null);
    const { install, token } = await installApp(s.ctx, {
      app: made.app,
      teamId: w.team.id,
      scopes: ["messages:write"],
      channelId: null,
      approvedBy: null,
    });
    const bot = (await getUser(s.ctx.kv, install.bot_user_id))!;
    const dm = await directChannelOf(s.ctx, [bot, w.member.user]);
    const posted = await fetch(`${s.url}/api/slack/chat.postMessage`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token.value}`, "Content-Type": "application/json" },
      body: JSON.stringify({ channel: dm.id, text: "Pick one", blocks: MENU }),
    }).then((res) => res.json());
    assert.equal(posted.ok, true, JSON.stringify(posted));
    const list = await api(s, "GET", `/channels/${dm.id}/messages`, { token: w.member.token });
    const messageId = list.body.data[0].id;
    const options = () =>
      api(s, "GET", `/channels/${dm.id}/messages/${messageId}/options?action_id=ext&value=a`, {
        token: w.member.token,
      });

    const offered = await options();
    assertStatus(offered, 200);
    assert.deepEqual(offered.body.data.options.map((o: { value: string }) => o.value), ["api"]);
    assert.equal(r.heard.length, 1);
    const [first] = r.heard;
    assert.deepEqual(first.payload.channel, { id: dm.id, name: "directmessage" });
    const expected = "v0=" +
      createHmac("sha256", made.signingSecret).update(`v0:${first.timestamp}:${first.body}`)
        .digest("hex");
    assert.equal(first.signature, expected);

    // An app registered before it had a signing secret: its requests could only be forged.
    const entry = await s.ctx.kv.get<App>(keys.app(made.app.id));
    const { signing_secret: _, ...unsigned } = entry.value!;
    await s.ctx.kv.set(keys.app(made.app.id), unsigned);
    const refused = await options();
    assertStatus(refused, 200);
    assert.equal(refused.body.data.options, null);
    assert.match(refused.body.data.error, /no signing secret/);
    assert.equal(r.heard.length, 1, "nothing was sent");
  } finally {
    await r.close();
    await s.close();
  }
});
