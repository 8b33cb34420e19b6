/**
 * Secret URLs (incoming webhooks, sign-in links) can't be guessed at speed: misses count against
 * the client's address across instances, and past 60 a minute the address gets 429.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { createIncoming } from "../domain/webhooks/incoming.ts";
import { MAX_MISSES_PER_MINUTE } from "../domain/guards/guessing.ts";
import { createLoginLink } from "../domain/people/sessions.ts";
import { createApp } from "../routes/app.ts";
import { clientAddress } from "../routes/client_address.ts";
import { addMemberAsOperator } from "../domain/channels/members.ts";
import {
  appParts,
  clearOfWindowEdge,
  createChannelAs,
  type TestServer,
  withWorkspace,
} from "./harness.ts";
import { checkResponse } from "./openapi_check.ts";
import { sharedStore, startService } from "./processes.ts";

const guess = () => "Gg".repeat(20).slice(0, 39) + crypto.randomUUID().slice(0, 1);

/** POSTs to a path of `base`, from `address` as a trusted proxy would say. */
async function send(base: string, path: string, address: string, body = '{"text":"hi"}') {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    body,
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json",
      "X-Forwarded-For": `6.6.6.6, ${address}`,
    },
  });
  const type = res.headers.get("content-type") ?? "";
  const parsed = type.includes("json") ? await res.json() : await res.text();
  checkResponse("POST", path, res.status, type.includes("json") ? parsed : null);
  return { status: res.status, retryAfter: res.headers.get("retry-after") };
}

/** A second instance of the service on the same store, as a rolling deploy would run. */
function secondInstance(s: TestServer) {
  const app = createApp(s.ctx, appParts(s.ctx));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: async () => {
      await server.shutdown();
      await app.close();
    },
  };
}

Deno.test("guessing: past 60 misses a minute an address gets 429 on every secret URL, across instances", () =>
  withWorkspace(async (s, w) => {
    await clearOfWindowEdge(20_000);
    const channel = await createChannelAs(s, w.admin.token, "alerts");
    await addMemberAsOperator(s.ctx, channel, w.bot.user);
    const { url } = await createIncoming(s.ctx, { channelId: channel, botId: w.bot.user.id }, null);
    const real = new URL(url).pathname;
    const other = secondInstance(s);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) {
        statuses.push((await send(s.url, `/hooks/${guess()}`, "7.7.7.7")).status);
      }
      for (let i = 0; i < 40; i++) {
        statuses.push((await send(other.url, `/hooks/${guess()}`, "7.7.7.7")).status);
      }
      const misses = statuses.filter((x) => x === 404).length;
      assert.equal(
        misses,
        MAX_MISSES_PER_MINUTE,
        "the two instances together let 60 misses through",
      );
      assert.deepEqual(statuses.slice(misses), Array(80 - misses).fill(429));

      const refused = await send(other.url, real, "7.7.7.7");
      assert.equal(refused.status, 429, "a right guess now tells the guesser nothing");
      assert.ok(Number(refused.retryAfter) >= 1);
      const login = await createLoginLink(s.ctx, w.admin.user.id);
      assert.equal((await send(other.url, new URL(login.url).pathname, "7.7.7.7", "")).status, 429);

      assert.equal((await send(s.url, real, "8.8.8.8")).status, 201, "other addresses go on");
    } finally {
      await other.close();
    }
  }, { TRUST_PROXY: "true" }));

Deno.test("guessing: unknown sign-in links count as misses; used and expired ones say which", () =>
  withWorkspace(async (s, w) => {
    await clearOfWindowEdge(20_000);
    for (let i = 0; i < MAX_MISSES_PER_MINUTE; i++) {
      const res = await fetch(`${s.url}/settings/login/${guess()}`, {
        headers: { "X-Forwarded-For": "9.9.9.9" },
      });
      assert.equal(res.status, 404);
      assert.match(await res.text(), /not known here/);
    }
    const { url } = await createLoginLink(s.ctx, w.member.user.id);
    const path = new URL(url).pathname;
    const limited = await fetch(`${s.url}${path}`, { headers: { "X-Forwarded-For": "9.9.9.9" } });
    await limited.body?.cancel();
    assert.equal(limited.status, 429);
    assert.ok(limited.headers.get("retry-after"));
    const opened = await fetch(`${s.url}${path}`, { headers: { "X-Forwarded-For": "1.2.3.4" } });
    assert.match(await opened.text(), /Sign in as Mo Member/);
    const used = await fetch(`${s.url}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { Origin: s.url, "X-Forwarded-For": "1.2.3.4" },
    });
    await used.body?.cancel();
    assert.equal(used.status, 303);
    const again = await fetch(`${s.url}${path}`, { headers: { "X-Forwarded-For": "1.2.3.4" } });
    assert.equal(again.status, 410);
    assert.match(await again.text(), /already used/);
  }, { TRUST_PROXY: "true" }));

Deno.test("guessing: the client address is the connection's, or the proxy's last hop when trusted", async () => {
  const app = new Hono().get("/", (c) => c.text(clientAddress(c, c.req.query("trust") === "1")));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  try {
    const ask = async (trust: boolean) =>
      await (await fetch(`http://127.0.0.1:${server.addr.port}/?trust=${trust ? 1 : 0}`, {
        headers: { "X-Forwarded-For": "10.0.0.1, 203.0.113.9" },
      })).text();
    assert.equal(await ask(false), "127.0.0.1", "without TRUST_PROXY the header is ignored");
    assert.equal(await ask(true), "203.0.113.9", "the last hop, the one the proxy appended");
  } finally {
    await server.shutdown();
  }
});

Deno.test("guessing: fast guesses from one address on two instances answer 404 or 429, never 5xx", async () => {
  const store = await sharedStore({ TRUST_PROXY: "true" });
  const [a, b] = await Promise.all([startService(store.env), startService(store.env)]);
  try {
    await clearOfWindowEdge(15_000);
    const statuses = new Map<number, number>();
    const guesser = async (base: string, n: number) => {
      for (let i = 0; i < n; i++) {
        const path = i % 2 ? `/hooks/${guess()}` : `/settings/login/${guess()}`;
        const res = await fetch(`${base}${path}`, {
          method: "POST",
          body: '{"text":"hi"}',
          headers: { "Content-Type": "application/json", "X-Forwarded-For": "9.9.9.9" },
        });
        await res.body?.cancel();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    };
    await Promise.all(
      Array.from({ length: 48 }, (_, i) => guesser(i % 2 ? a.url : b.url, 40)),
    );
    const seen = Object.fromEntries(statuses);
    console.log(
      `guessing: 1,920 guesses from one address on two instances: ${JSON.stringify(seen)}`,
    );
    assert.deepEqual(
      [...statuses.keys()].filter((s) => s !== 404 && s !== 429),
      [],
      JSON.stringify(seen),
    );
    assert.ok((statuses.get(404) ?? 0) <= MAX_MISSES_PER_MINUTE, "past the limit, no 404");
  } finally {
    await Promise.all([a.kill(), b.kill()]);
    await store.cleanup();
  }
});
