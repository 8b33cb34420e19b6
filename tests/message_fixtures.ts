import assert from "node:assert/strict";
import type { OutboxEvent } from "../core/types.ts";
import { keys } from "../kv/keys.ts";
import { type Actor, api, createChannelAs, startServer, type TestServer } from "./harness.ts";

export { assertInvalid } from "./harness.ts";

/** Every outbox entry, oldest first (event ids are UUIDv7). */
export async function outbox(s: TestServer): Promise<OutboxEvent[]> {
  const out: OutboxEvent[] = [];
  for await (const e of s.ctx.kv.list<OutboxEvent>({ prefix: keys.events() })) out.push(e.value);
  return out;
}

/** A channel created over the API by `owner`. */
export const newChannel = (
  s: TestServer,
  owner: Actor,
  name: string,
  visibility: "public" | "private" = "public",
) => createChannelAs(s, owner.token, name, visibility);

export const post = (s: TestServer, who: Actor, channelId: string, body: Record<string, unknown>) =>
  api(s, "POST", `/channels/${channelId}/messages`, { token: who.token, body });

/** Posts and insists on 201; returns the Message. */
export async function posted(
  s: TestServer,
  who: Actor,
  channelId: string,
  body: Record<string, unknown>,
) {
  const res = await post(s, who, channelId, body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

/** Asserts a 422 that names `field` among its errors. */
/** Runs `fn` against a fresh server, closing it whatever happens. */
export async function withServer(fn: (s: TestServer) => Promise<void>) {
  const s = await startServer();
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}
