/**
 * Socket Mode against a hostile or careless app (decisions.md, "Hardening rules" and "Apps without
 * a public URL"): a connection's frames are budgeted and acks of envelopes it never held cost no
 * store read; an event sent on its post's own commit and never acked goes again after 3 s.
 */
import assert from "node:assert/strict";
import { api, countReads, withWorkspace } from "./harness.ts";
import { sleep, waitUntil } from "./webhook_receivers.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp, uninstallApp } from "../domain/apps/installs.ts";
import { socketCounts } from "../kv/apps/socket_queue.ts";
import { createAppToken } from "../domain/apps/socket/app_tokens.ts";
import { rawSocket } from "./socket_client.ts";
import type { TestServer, Workspace } from "./harness.ts";
import { type Service, sharedStore, startService } from "./processes.ts";

const MANIFEST = JSON.stringify({
  display_information: { name: "Hardened" },
  oauth_config: { scopes: { bot: ["channels:history"] } },
  settings: {
    event_subscriptions: { bot_events: ["message.channels"] },
    socket_mode_enabled: true,
  },
});

/** The app in Socket Mode, installed in the team and in its general channel; its app token. */
async function listening(s: TestServer, w: Workspace) {
  const { app } = await createAppFromManifest(s.ctx, MANIFEST, null);
  const { install } = await installApp(s.ctx, {
    app,
    teamId: w.team.id,
    scopes: app.scopes,
    channelId: null,
    approvedBy: null,
  });
  await api(s, "POST", `/channels/${w.team.general_channel_id}/members`, {
    token: w.admin.token,
    body: { user_id: install.bot_user_id },
  });
  const { token } = await createAppToken(s.ctx, { appId: app.id, name: null, actor: null });
  return { app, install, token };
}

Deno.test("socket mode: past 100 frames at once a connection is told too_many_messages and closed", async () => {
  await withWorkspace(async (s) => {
    const { app } = await createAppFromManifest(s.ctx, MANIFEST, null);
    const { token } = await createAppToken(s.ctx, { appId: app.id, name: null, actor: null });
    const conn = await rawSocket(s.url, token);
    const reads = countReads(s.ctx.kv);
    for (let i = 0; i < 150; i++) {
      conn.send(JSON.stringify({ envelope_id: crypto.randomUUID() + "_" + crypto.randomUUID() }));
    }
    await waitUntil(() => conn.got.length > 1, 5_000, "the connection told why it closes");
    await conn.closed;
    assert.deepEqual(conn.got.at(-1), { type: "disconnect", reason: "too_many_messages" });
    // Acks of envelopes it never held read nothing: what was read is the hub's own polling.
    assert.ok(reads.get + reads.getMany < 20, `${JSON.stringify(reads)} reads`);
  });
});

Deno.test("socket mode: a frame over 1 MiB is refused, message_too_large", async () => {
  await withWorkspace(async (s) => {
    const { app } = await createAppFromManifest(s.ctx, MANIFEST, null);
    const { token } = await createAppToken(s.ctx, { appId: app.id, name: null, actor: null });
    const conn = await rawSocket(s.url, token);
    conn.send(`{"envelope_id":"x","payload":"${"a".repeat(1024 * 1024)}"}`);
    await waitUntil(() => conn.got.length > 1, 5_000, "the connection told why it closes");
    await conn.closed;
    assert.deepEqual(conn.got.at(-1), { type: "disconnect", reason: "message_too_large" });
    // Another token of the app: this one waits a while after its connection overran.
    const other = await createAppToken(s.ctx, { appId: app.id, name: null, actor: null });
    const fits = await rawSocket(s.url, other.token);
    fits.send(`{"envelope_id":"x","payload":"${"a".repeat(1000 * 1024)}"}`);
    fits.send("not json");
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(fits.got.length, 1, JSON.stringify(fits.got));
    await fits.close();
  });
});

Deno.test("socket mode: an event sent on its post's own commit and never acked goes again after 3 s", async () => {
  await withWorkspace(async (s, w) => {
    const { app, token } = await listening(s, w);
    const conn = await rawSocket(s.url, token, { ack: false });
    // The bot's joining waited for it: acked, so that no claim of an earlier event is running.
    await waitUntil(() => conn.got.length >= 2, 5_000, "the event of the bot's joining");
    conn.send(JSON.stringify({ envelope_id: conn.got[1].envelope_id }));
    // Its queue read empty, a new event is claimed in its post's commit and sent at once.
    await waitUntil(() => s.sockets.here(app.id), 5_000, "the app's queue read empty");
    // The hub reads an app's queue once on its first look at the store's signal, 50 ms after the
    // connection opened; that read would send the event again whether or not the claim had a
    // timer. Let it pass, as it has for any connection that stays: the retry must come anyway.
    await sleep(300);
    const general = w.team.general_channel_id;
    await api(s, "POST", `/channels/${general}/messages`, {
      token: w.member.token,
      body: { body: "ack me" },
    });
    const sends = () => conn.got.filter((m) => m.payload?.event?.text === "ack me");
    await waitUntil(() => sends().length >= 2, 9_000, "the event sent again");
    const [first, again] = sends() as unknown as { envelope_id: string; retry_attempt: number }[];
    assert.equal(again.envelope_id, first.envelope_id);
    assert.deepEqual([first.retry_attempt, again.retry_attempt], [0, 1]);
    await conn.close();
  });
});

Deno.test("socket mode: twenty connections opened at once on two instances: ten get hello", async () => {
  const store = await sharedStore();
  const services: Service[] = [];
  const sockets: WebSocket[] = [];
  try {
    services.push(await startService(store.env), await startService(store.env));
    const { app } = await createAppFromManifest(store.ctx, MANIFEST, null);
    const { token } = await createAppToken(store.ctx, { appId: app.id, name: null, actor: null });
    // Every URL first, then every socket at once: the openings race on both instances.
    const urls = await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) =>
          fetch(`${services[i % 2].url}/api/slack/apps.connections.open`, {
            method: "POST",
            headers: { Authorization: `Bearer ${token}` },
          }).then((r) => r.json()).then((body) => body.url as string),
      ),
    );
    sockets.push(...urls.map((url) => new WebSocket(url)));
    const first = await Promise.all(
      sockets.map((ws) =>
        new Promise<string>((told) =>
          ws.addEventListener("message", (e) => {
            const message = JSON.parse(e.data);
            told(message.reason ?? message.type);
          }, { once: true })
        )
      ),
    );
    assert.deepEqual(
      [first.filter((t) => t === "hello").length, first.filter((t) => t !== "hello")],
      [10, Array(10).fill("too_many_websockets")],
    );
  } finally {
    await Promise.all(sockets.map((ws) => {
      if (ws.readyState === WebSocket.CLOSED) return;
      const closed = new Promise((done) => ws.addEventListener("close", done));
      ws.close();
      return closed;
    }));
    await Promise.all(services.map((s) => s.kill()));
    await store.cleanup();
  }
});

Deno.test("socket mode: uninstalled, an app's waiting events are dropped and its connections closed", async () => {
  await withWorkspace(async (s, w) => {
    const { app, token } = await listening(s, w);
    // Away: the bot's joining and a post wait for it.
    await api(s, "POST", `/channels/${w.team.general_channel_id}/messages`, {
      token: w.member.token,
      body: { body: "while away" },
    });
    assert.equal((await socketCounts(s.ctx.kv, app.id)).backlog, 2);
    // Sent both, it acks neither: they stay pending.
    const connected = await rawSocket(s.url, token, { ack: false });
    await waitUntil(() => connected.got.length === 3, 5_000, "the two events");

    await uninstallApp(s.ctx, { teamId: w.team.id, appId: app.id, actor: null });
    // Closed at once, not at the next check of links five seconds on.
    await waitUntil(
      () => connected.got.some((m) => m.reason === "link_disabled"),
      4_000,
      "link_disabled",
    );
    await connected.closed;
    const counts = await socketCounts(s.ctx.kv, app.id);
    assert.deepEqual([counts.backlog, counts.dropped], [0, 2]);

    // Back with its token, it gets nothing of what waited.
    const back = await rawSocket(s.url, token, { ack: false });
    await waitUntil(() => s.sockets.here(app.id), 5_000, "its queue read");
    assert.deepEqual(back.got.map((m) => m.type), ["hello"]);
    await back.close();
  });
});

Deno.test("socket mode: a token whose connection overran its budget waits before it connects again", async () => {
  await withWorkspace(async (s) => {
    const { app } = await createAppFromManifest(s.ctx, MANIFEST, null);
    const { token } = await createAppToken(s.ctx, { appId: app.id, name: null, actor: null });
    const conn = await rawSocket(s.url, token);
    // Within the frame budget, past the byte budget: 1 MiB at once, then more.
    conn.send(`{"envelope_id":"x","payload":"${"a".repeat(1000 * 1024)}"}`);
    conn.send(`{"envelope_id":"x","payload":"${"a".repeat(100 * 1024)}"}`);
    await waitUntil(() => conn.got.length > 1, 5_000, "the connection told why it closes");
    assert.deepEqual(conn.got.at(-1), { type: "disconnect", reason: "too_many_messages" });
    await conn.closed;
    const opened = await fetch(`${s.url}/api/slack/apps.connections.open`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
    }).then((r) => r.json());
    const refused = await fetch(opened.url.replace("ws://", "http://"), {
      headers: {
        Upgrade: "websocket",
        Connection: "Upgrade",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
      },
    });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get("Retry-After")) > 0);
    await refused.body?.cancel();
  });
});
