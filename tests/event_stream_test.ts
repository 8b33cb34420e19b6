/**
 * The live event stream: every event a reader may see, once, in commit order, resumable from
 * any SSE id without gaps or repeats, whichever instance it reconnects to.
 */
import assert from "node:assert/strict";
import { createDirectChannel } from "../domain/channels/channels.ts";
import { createToken, revokeTokenById } from "../domain/people/tokens.ts";
import { keys } from "../kv/keys.ts";
import {
  actor,
  api,
  assertInvalid,
  createChannelAs,
  startServer,
  withWorkspace,
  workspace,
} from "./harness.ts";
import { sharedStore, startService } from "./processes.ts";
import { connect, type StreamEvent } from "./sse_client.ts";
import { sleep, waitUntil } from "./webhook_receivers.ts";
import { subjectOfPerson } from "../domain/principals.ts";

const STREAM = "/api/v1/events/stream";

/** Commit order as the stream gives it: SSE ids compare as (versionstamp, event id). */
function assertInOrder(events: StreamEvent[]) {
  for (let i = 1; i < events.length; i++) {
    assert.ok(events[i - 1].id < events[i].id, `${events[i - 1].id} before ${events[i].id}`);
  }
}

async function postAs(base: string, token: string, channel: string, body: string) {
  const res = await fetch(`${base}/api/v1/channels/${channel}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ body }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()).data.id as string;
}

Deno.test("event stream: 1,000 events through two instances, each exactly once and in order, across a dropped connection", async () => {
  const store = await sharedStore({ INTEGRATIONS_API_RATE_LIMIT: "100000" });
  const a = await startService(store.env);
  const b = await startService(store.env);
  try {
    const w = await workspace(store.ctx);
    const general = w.team.general_channel_id;
    const steady = await connect(`${b.url}${STREAM}`, w.admin.token);
    let dropping = await connect(`${a.url}${STREAM}`, w.member.token);
    const gathered: StreamEvent[] = [];
    const posted: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < 1_000) {
        const n = next++;
        posted.push(await postAs(n % 2 ? a.url : b.url, w.admin.token, general, `#${n}`));
      }
    };
    const posting = Promise.all(Array.from({ length: 8 }, worker));
    await waitUntil(() => posted.length >= 300, 20_000, "300 posts");
    // Dropped mid-stream, it comes back to the other instance from its last id.
    await dropping.close();
    gathered.push(...dropping.events);
    const resumedAfter = dropping.lastEventId();
    dropping = await connect(`${b.url}${STREAM}`, w.member.token, {
      lastEventId: dropping.lastEventId(),
    });
    await posting;
    const bodies = (events: StreamEvent[]) => events.map((e) => e.data.data.id as string);
    await waitUntil(
      () => gathered.length + dropping.events.length >= 1_000,
      20_000,
      "the resumed stream to catch up",
    ).catch((e) => {
      const have = new Set([...gathered, ...dropping.events].map((x) => x.id));
      const missing = steady.events.filter((x) => !have.has(x.id)).map((x) => x.id);
      throw new Error(
        `${e.message}: ${gathered.length} before the drop (resumed after ${resumedAfter}), ` +
          `${dropping.events.length} after, ${steady.events.length} on the steady stream; ` +
          `missing ${missing.join(", ")}`,
      );
    });
    await steady.waitFor(1_000, 20_000);
    await sleep(200);
    gathered.push(...dropping.events);
    for (const events of [gathered, steady.events]) {
      assert.equal(events.length, 1_000, "every event, none twice");
      assert.deepEqual(new Set(bodies(events)), new Set(posted));
      assert.ok(events.every((e) => e.event === "message.created" && e.data.type === e.event));
      assertInOrder(events);
    }
    assert.deepEqual(steady.events.map((e) => e.id), gathered.map((e) => e.id), "one order");
    await dropping.close();
    await steady.close();
  } finally {
    await a.kill();
    await b.kill();
    await store.cleanup();
  }
});

Deno.test("event stream: a member's stream never carries a private channel it isn't in, and stops when it leaves", () =>
  withWorkspace(async (s, w) => {
    const secret = await createChannelAs(s, w.admin.token, "secret", "private");
    const general = w.team.general_channel_id;
    const stream = await connect(`${s.url}${STREAM}`, w.member.token);
    await postAs(s.url, w.admin.token, secret, "not for Mo");
    await postAs(s.url, w.admin.token, general, "for everyone");
    await stream.waitFor(1);
    assert.equal(
      (await api(s, "POST", `/channels/${secret}/members`, {
        token: w.admin.token,
        body: { user_id: w.member.user.id },
      })).status,
      201,
    );
    await postAs(s.url, w.admin.token, secret, "now Mo is in");
    await stream.waitFor(4);
    assert.deepEqual(stream.events.map((e) => [e.event, e.data.data.body ?? ""]), [
      ["message.created", "for everyone"],
      ["channel.member_added", ""],
      ["message.created", `<@${w.member.user.id}> has joined the channel`],
      ["message.created", "now Mo is in"],
    ]);
    assert.equal(
      (await api(s, "DELETE", `/channels/${secret}/members/${w.member.user.id}`, {
        token: w.admin.token,
      })).status,
      204,
    );
    await postAs(s.url, w.admin.token, secret, "Mo has left");
    await postAs(s.url, w.admin.token, general, "still for everyone");
    await stream.waitFor(5);
    await sleep(200);
    assert.deepEqual(stream.events.slice(4).map((e) => e.data.data.body), ["still for everyone"]);
    const filtered = await connect(
      `${s.url}${STREAM}?types=message.created&channel_ids=${secret}`,
      w.member.token,
    );
    assert.equal(filtered.status, 422, "a channel it can't see is refused like an unknown one");
    assertInvalid({ status: 422, headers: new Headers(), body: filtered.body }, "channel_ids");
    await stream.close();
  }));

Deno.test("event stream: a token holds at most 10 open streams", () =>
  withWorkspace(async (s, w) => {
    const url = `${s.url}${STREAM}`;
    const open = await Promise.all(Array.from({ length: 10 }, () => connect(url, w.bot.token)));
    assert.ok(open.every((c) => c.status === 200));
    const eleventh = await connect(url, w.bot.token);
    assert.equal(eleventh.status, 429);
    assert.match((eleventh.body as { message: string }).message, /at most 10/);
    assert.equal((await connect(url, w.member.token)).status, 200, "other tokens have their own");
    await open[0].close();
    await waitUntil(async () => {
      const again = await connect(url, w.bot.token);
      await again.close();
      return again.status === 200;
    });
    await Promise.all(open.map((c) => c.close()));
  }));

Deno.test("event stream: a reader too slow to keep up is cut off, and resumes without loss", () =>
  withWorkspace(async (s, w) => {
    const general = w.team.general_channel_id;
    const slow = await connect(`${s.url}${STREAM}`, w.member.token);
    slow.pause();
    const big = "x".repeat(9_000);
    const posted: string[] = [];
    for (let i = 0; i < 600; i++) posted.push(await postAs(s.url, w.admin.token, general, big));
    slow.resume();
    // Cut off: the connection ends abruptly, what was queued for it dropped.
    await slow.ended.catch(() => {});
    assert.ok(slow.events.length < 600, `it got ${slow.events.length} before it was cut off`);
    const resumed = await connect(`${s.url}${STREAM}`, w.member.token, {
      lastEventId: slow.lastEventId(),
    });
    await resumed.waitFor(600 - slow.events.length);
    await sleep(200);
    const all = [...slow.events, ...resumed.events];
    assert.deepEqual(all.map((e) => e.data.data.id), posted, "each once, in order");
    assertInOrder(all);
    await resumed.close();
  }));

Deno.test("event stream: a revoked token's stream ends at once", () =>
  withWorkspace(async (s, w) => {
    const reader = await actor(s.ctx, w.team, "Rae Reader", "member", ["messages:read"]);
    const stream = await connect(`${s.url}${STREAM}`, reader.token);
    await postAs(s.url, w.admin.token, w.team.general_channel_id, "before");
    await stream.waitFor(1);
    const [token] = await Array.fromAsync(
      s.ctx.kv.list<string>({ prefix: keys.userTokens(reader.user.id) }),
    );
    await revokeTokenById(s.ctx, token.key[2] as string, null);
    await stream.ended;
    assert.ok(stream.comments.some((c) => c.includes("no longer valid")));
    await postAs(s.url, w.admin.token, w.team.general_channel_id, "after");
    await sleep(100);
    assert.equal(stream.events.length, 1);
  }));

Deno.test("event stream: SIGTERM ends streams with retry, so clients come back elsewhere", async () => {
  const store = await sharedStore();
  const service = await startService(store.env);
  try {
    const w = await workspace(store.ctx);
    const stream = await connect(`${service.url}${STREAM}`, w.member.token);
    assert.equal(stream.status, 200);
    const code = await service.stop("SIGTERM");
    await stream.ended;
    assert.equal(code, 0);
    assert.equal(stream.retry, 1000);
    assert.ok(stream.comments.some((c) => c.includes("stopping")));
  } finally {
    await service.kill();
    await store.cleanup();
  }
});

Deno.test("event stream: a new stream starts now; after= an event id resumes after it", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const general = w.team.general_channel_id;
    await postAs(s.url, w.admin.token, general, "before anyone listened");
    const live = await connect(`${s.url}${STREAM}`, w.member.token);
    const ids = [];
    for (const body of ["one", "two", "three"]) {
      ids.push(await postAs(s.url, w.admin.token, general, body));
    }
    const [first] = await live.waitFor(3);
    assert.deepEqual(live.events.map((e) => e.data.data.body), ["one", "two", "three"]);
    const resumed = await connect(
      `${s.url}${STREAM}?after=${first.data.id}&types=message.created`,
      w.member.token,
    );
    await resumed.waitFor(2);
    assert.deepEqual(resumed.events.map((e) => e.data.data.body), ["two", "three"]);
    assert.equal(
      (await connect(`${s.url}${STREAM}?after=nonsense`, w.member.token)).status,
      422,
    );
    await live.close();
    await resumed.close();
  } finally {
    await s.close();
  }
});

Deno.test("event stream: resumed from long ago, it reads what its reader sees, in the live stream's order", async () => {
  const store = await sharedStore({ INTEGRATIONS_API_RATE_LIMIT: "100000" });
  const a = await startService(store.env);
  const b = await startService(store.env);
  try {
    const w = await workspace(store.ctx);
    const s = store.as(a);
    const general = w.team.general_channel_id;
    const hidden = await createChannelAs(s, w.admin.token, "hidden", "private");
    const live = await connect(`${b.url}${STREAM}?types=message.created`, w.member.token);
    let next = 0;
    const worker = async () => {
      while (next < 900) {
        const n = next++;
        const channel = n % 3 === 2 ? hidden : general;
        await postAs(n % 2 ? a.url : b.url, w.admin.token, channel, `#${n}`);
        // Spread over more than the commit lag, so the catch-up reads it in several pages.
        await sleep(60);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    await live.waitFor(600, 20_000);
    await live.close();
    // A place in time before every post: the stream reads from the reader's own indexes.
    const longAgo = `${(Date.now() - 3_600_000).toString(16).padStart(12, "0")}`;
    const after = `${longAgo.slice(0, 8)}-${longAgo.slice(8)}-7000-8000-000000000000`;
    const resumed = await connect(
      `${a.url}${STREAM}?types=message.created&after=${after}`,
      w.member.token,
    );
    await resumed.waitFor(600, 20_000);
    await sleep(300);
    await resumed.close();
    assert.deepEqual(resumed.events.map((e) => e.id), live.events.map((e) => e.id));
    assertInOrder(resumed.events);
  } finally {
    await a.kill();
    await b.kill();
    await store.cleanup();
  }
});

Deno.test("event stream: a token's streams end when it expires, on every instance, DMs included", async () => {
  const store = await sharedStore();
  const a = await startService(store.env);
  const b = await startService(store.env);
  try {
    const w = await workspace(store.ctx);
    const dm = await createDirectChannel(store.ctx, [w.admin.user, w.member.user]);
    const { value, token } = await createToken(store.ctx, w.member.user, {
      scopes: ["messages:read"],
      expiresInSeconds: 2,
      actor: subjectOfPerson(w.member.user),
    });
    const streams = await Promise.all([a, b].map((s) => connect(`${s.url}${STREAM}`, value)));
    await postAs(a.url, w.admin.token, dm.id, "before it expires");
    await Promise.all(streams.map((s) => s.waitFor(1)));
    const expiry = Date.parse(token.expires_at!);
    await Promise.all(streams.map((s) => s.ended));
    const endedAt = Date.now();
    assert.ok(endedAt - expiry < 5_000, `ended ${endedAt - expiry} ms after the expiry`);
    for (const s of streams) {
      assert.ok(s.comments.some((c) => c.includes("expired")), s.comments.join(" | "));
    }
    await postAs(b.url, w.admin.token, dm.id, "after it expired");
    await sleep(300);
    for (const s of streams) assert.equal(s.events.length, 1, "nothing after the expiry");
  } finally {
    await a.kill();
    await b.kill();
    await store.cleanup();
  }
});

/** How many of the connections from `clients` (their local ports) the service at `port` holds. */
async function heldOf(port: number, clients: Deno.TcpConn[]): Promise<number> {
  const out = await new Deno.Command("ss", {
    args: ["-Htn", "state", "established", `( sport = :${port} )`],
  }).output();
  const peers = new Set(clients.map((c) => `:${(c.localAddr as Deno.NetAddr).port}`));
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((l) => l.trim() && peers.has(l.trim().split(/\s+/).at(-1)!.replace(/^.*(:\d+)$/, "$1")))
    .length;
}

Deno.test("event stream: readers too slow are cut off, and a token never holds more connections than its cap", async () => {
  const store = await sharedStore();
  const s = await startService(store.env);
  const port = Number(new URL(s.url).port);
  const sockets: Deno.TcpConn[] = [];
  const open = async () => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new TextEncoder().encode(
      `GET ${STREAM} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    ));
    sockets.push(conn);
    return conn;
  };
  let token = "";
  try {
    const w = await workspace(store.ctx);
    token = w.member.token;
    const general = w.team.general_channel_id;
    // Readers that never read: each asks for the stream, then reads nothing. As many as a token
    // may hold.
    for (let i = 0; i < 10; i++) await open();
    await waitUntil(async () => (await heldOf(port, sockets)) === 10, 5_000, "10 connected");
    const big = "x".repeat(9_000);
    for (let i = 0; i < 1_200; i++) await postAs(s.url, w.admin.token, general, `${i} ${big}`);
    // Cut off, they are sent nothing more; while their connections last, they still count.
    const again = await connect(`${s.url}${STREAM}`, token);
    assert.equal(again.status, 429, "an 11th stream while the 10 connections last");
    assert.ok((await heldOf(port, sockets)) <= 10);
    for (const c of sockets.splice(0)) c.close();
    await waitUntil(
      async () => {
        const next = await connect(`${s.url}${STREAM}`, token);
        await next.close();
        return next.status === 200;
      },
      10_000,
      "room for streams once the connections are gone",
    );
  } finally {
    for (const c of sockets) c.close();
    await s.kill();
    await store.cleanup();
  }
});
