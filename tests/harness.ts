import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { startDeliveryEngine } from "../delivery/engine.ts";
import { workPair } from "../core/work_pair.ts";
import type { JobRoom } from "../kv/outbox/outbox.ts";
import type { CommitWork } from "../kv/store/plan.ts";
import type { DeliveryEngine, EngineOptions } from "../delivery/engine_contract.ts";
import type { Ctx } from "../domain/context.ts";
import { createLoginLink } from "../domain/people/sessions.ts";
import { configureLog } from "../core/log.ts";
import { createKeyring, generateAppKey } from "../core/keyring.ts";
import { loadSettings, type Settings } from "../core/settings.ts";
import { createToken } from "../domain/people/tokens.ts";
import type { Role, Scope, Team, User } from "../core/types.ts";
import type { HandedJobs } from "../core/webhook_records.ts";
import { SCOPES } from "../core/types.ts";
import { createTeam, createUser } from "../domain/people/workspace.ts";
import { keys } from "../kv/keys.ts";
import { wrapStore } from "../kv/store/open.ts";
import { SocketHub } from "../delivery/apps/socket/hub.ts";
import { serviceRunner } from "../cli/service_runner.ts";
import { AppSender } from "../delivery/apps/sender.ts";
import { StreamHub } from "../domain/stream/hub.ts";
import { checkResponse } from "./openapi_check.ts";
import type { Store } from "../kv/store/store.ts";

// The suite's servers run in this process: their request and delivery lines would bury its output.
configureLog({ level: "error", format: "auto" });

/** A running service on a loopback port with a fresh in-memory KV. */
export interface TestServer {
  ctx: Ctx;
  url: string;
  /** The webhook delivery engine, when started with `{ engine }`. */
  engine?: DeliveryEngine;
  close(): Promise<void>;
}

/** Every route an app serves, as its router holds them (middleware's `ALL` included). */
export type ServedRoutes = readonly { method: string; path: string }[];

/**
 * Starts the real app over real HTTP. `env` overrides settings as the environment would.
 * `opts.engine` also runs the webhook delivery engine (true, or its options).
 */
export async function startServer(
  env: Record<string, string> = {},
  opts: { engine?: boolean | EngineOptions } = {},
): Promise<TestServer & { routes: ServedRoutes; sockets: SocketHub }> {
  const settings: Settings = loadSettings({
    KV_PATH: ":memory:",
    INTEGRATIONS_API_RATE_LIMIT: "100000",
    WEBHOOKS_ALLOW_PRIVATE_URLS: "true",
    ...env,
  });
  // Wrapped as openStore wraps it, so the suite runs what production runs.
  const kv = wrapStore(await Deno.openKv(settings.kvPath), settings.kvPath);
  const ctx: Ctx = { kv, settings, keyring: await createKeyring(generateAppKey()) };
  const parts = appParts(ctx);
  const app = createApp(ctx, parts);
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  ctx.settings.baseUrl = url;
  const engine = opts.engine
    ? startEngine(ctx, opts.engine === true ? {} : opts.engine)
    : undefined;
  return {
    ctx,
    url,
    engine,
    routes: app.routes.map(({ method, path }) => ({ method, path })),
    sockets: parts.sockets,
    async close() {
      await engine?.stop();
      await app.close();
      await server.shutdown();
      await kv.settled();
      kv.close();
    },
  };
}

/** A stream hub hearing the store's commits, as main.ts makes it. */
export function startStreams(ctx: Ctx): StreamHub {
  const streams = new StreamHub(ctx);
  ctx.kv.committed.subscribe((committed) => streams.heard(committed));
  return streams;
}

/** What main.ts makes for the app besides the store: the hubs, and the sender of calls to apps. */
export function appParts(ctx: Ctx) {
  const sockets = startSockets(ctx);
  const calls = new AppSender(sockets);
  return { streams: startStreams(ctx), sockets, calls, admin: serviceRunner(ctx, calls) };
}

/** Socket Mode's hub hearing the store's commits, as main.ts makes it. */
export function startSockets(ctx: Ctx): SocketHub {
  const sockets = new SocketHub(ctx);
  ctx.kv.sendSocketsFrom(sockets.here);
  ctx.kv.committed.subscribe((committed) => sockets.heard(committed));
  return sockets;
}

/**
 * A delivery engine taking the jobs of the store's commits, as main.ts starts it; it stops
 * hearing them when it stops.
 */
export function startEngine(ctx: Ctx, opts: EngineOptions = {}): DeliveryEngine {
  const work = workPair<CommitWork, JobRoom>();
  ctx.kv.produceInto(work.producer);
  return startDeliveryEngine(ctx, work.intake, opts);
}

export interface Actor {
  user: User;
  token: string;
}

/** A team with an admin, a plain member and a bot, each holding an all-scopes token. */
export interface Workspace {
  team: Team;
  admin: Actor;
  member: Actor;
  bot: Actor;
}

export async function actor(
  ctx: Ctx,
  team: Team,
  name: string,
  kind: Role | "bot",
  scopes: readonly Scope[] = SCOPES,
): Promise<Actor> {
  const user = kind === "bot"
    ? await createUser(ctx, { teamId: team.id, name, type: "bot" }, null)
    : await createUser(ctx, { teamId: team.id, name, type: "human", role: kind }, null);
  const { value } = await createToken(ctx, user, { scopes: [...scopes], actor: null });
  return { user, token: value };
}

export async function workspace(ctx: Ctx, name = "Acme"): Promise<Workspace> {
  const team = await createTeam(ctx, name);
  return {
    team,
    admin: await actor(ctx, team, "Ada Admin", "admin"),
    member: await actor(ctx, team, "Mo Member", "member"),
    bot: await actor(ctx, team, "Robo Bot", "bot"),
  };
}

/**
 * Waits out the end of the current minute if it is near: rate-limit windows are aligned to the
 * clock, and a test that counts requests against a small limit must not straddle two windows.
 */
export async function clearOfWindowEdge(marginMs = 5_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

/** Runs `fn` against a fresh server and workspace, closing the server whatever happens. */
export async function withWorkspace(
  fn: (s: Awaited<ReturnType<typeof startServer>>, w: Workspace) => Promise<void>,
  env: Record<string, string> = {},
  opts: Parameters<typeof startServer>[1] = {},
): Promise<void> {
  const s = await startServer(env, opts);
  try {
    await fn(s, await workspace(s.ctx));
  } finally {
    await s.close();
  }
}

/** `kv` with its reads counted: every call still goes to the real store. */
export function countReads(kv: Store) {
  const reads = { get: 0, getMany: 0 };
  const get = kv.get.bind(kv);
  const getMany = kv.getMany.bind(kv);
  kv.get = ((...args: Parameters<Store["get"]>) => (reads.get++, get(...args))) as Store["get"];
  kv.getMany =
    ((...args: Parameters<Store["getMany"]>) => (reads.getMany++, getMany(...args))) as Deno.Kv[
      "getMany"
    ];
  return reads;
}

/**
 * The rate limit's shared counts: bookkeeping every instance syncs in the background whenever it
 * likes, not state a request writes.
 */
const isRateCount = (key: Deno.KvKey) => key[0] === keys.rateCounts()[0];

/** The store's entries under `prefix`, the rate limit's counts left out. */
export async function* storeEntries(kv: Store, prefix: Deno.KvKey = []) {
  for await (const e of kv.list({ prefix })) if (!isRateCount(e.key)) yield e;
}

/** How many keys start with `prefix`; the whole store by default (rate counts left out). */
export async function countKeys(kv: Store, prefix: Deno.KvKey = []): Promise<number> {
  let n = 0;
  for await (const _ of storeEntries(kv, prefix)) n++;
  return n;
}

/**
 * First attempts and retries not yet settled: jobs, and first attempts still in the records their
 * process leased to itself (handed jobs), `subscriptionId`'s or everyone's.
 */
export async function unsettled(kv: Store, subscriptionId?: string): Promise<number> {
  return await countKeys(kv, keys.jobs(subscriptionId)) + await handedPending(kv, subscriptionId);
}

/** First attempts still in the records their process leased to itself, not yet jobs. */
export async function handedPending(kv: Store, subscriptionId?: string): Promise<number> {
  let n = 0;
  for await (const e of kv.list<HandedJobs>({ prefix: keys.handedJobs() })) {
    n += e.value.pending.filter((p) => (subscriptionId ?? p.subscription_id) === p.subscription_id)
      .length;
  }
  return n;
}

/** Creates a channel over the API as `token`, insisting on 201; returns its id. */
export async function createChannelAs(
  s: TestServer,
  token: string,
  name: string,
  visibility: "public" | "private" = "public",
): Promise<string> {
  const res = await api(s, "POST", "/channels", { token, body: { name, visibility } });
  assertStatus(res, 201, `create ${name}`);
  return res.body.data.id;
}

/** Asserts the status, and that an error answer carries its `message`. */
export function assertStatus(res: ApiResponse, status: number, what = "") {
  assert.equal(res.status, status, `${what} ${JSON.stringify(res.body)}`);
  if (status >= 400) assert.equal(typeof res.body.message, "string");
}

/** Asserts a 422 with a `message` and an `errors` entry for `field`. */
export function assertInvalid(res: ApiResponse, field: string, what = "") {
  assert.equal(res.status, 422, `${what} ${JSON.stringify(res.body)}`);
  assert.equal(typeof res.body.message, "string");
  assert.ok(
    res.body.errors?.[field]?.length,
    `${what} errors.${field}: ${JSON.stringify(res.body)}`,
  );
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** A Slack Web API call with `token`, its arguments as JSON: Slack's answer, checked against openapi.yaml. */
export async function slackApi(
  server: Pick<TestServer, "url">,
  token: string,
  { method, args }: { method: string; args: object },
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const res = await fetch(`${server.url}/api/slack/${method}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(args),
  });
  const body = await res.json();
  checkResponse("POST", `/api/slack/${method}`, res.status, body);
  return body;
}

/**
 * Calls the API over HTTP as `token`, and checks the answer against openapi.yaml: a response
 * the document does not describe fails the test.
 */
export async function api(
  server: TestServer,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers = new Headers(opts.headers);
  if (opts.token) headers.set("Authorization", `Bearer ${opts.token}`);
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers.set("Content-Type", "application/json");
  }
  const res = await fetch(`${server.url}/api/v1${path}`, { method, headers, body });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : null;
  checkResponse(method, `/api/v1${path}`, res.status, parsed);
  return { status: res.status, headers: res.headers, body: parsed };
}

/** Signs a person in over HTTP, as the sign-in page's button does; returns the Cookie header. */
export async function signedInCookie(base: string, ctx: Ctx, userId: string): Promise<string> {
  const { url } = await createLoginLink(ctx, userId);
  const res = await fetch(`${base}${new URL(url).pathname}`, {
    method: "POST",
    redirect: "manual",
    headers: { Origin: base },
  });
  await res.body?.cancel();
  assert.equal(res.status, 303);
  return res.headers.get("set-cookie")!.split(";")[0];
}

/** What the Integrations bot told `token`'s person, oldest first. */
export async function toldTo(s: TestServer, token: string): Promise<string[]> {
  const channels = await api(s, "GET", "/channels", { token });
  const dm = channels.body.data.find((c: { is_direct: boolean; name: string }) =>
    c.is_direct && c.name.startsWith("Integrations")
  );
  if (!dm) return [];
  const page = await api(s, "GET", `/channels/${dm.id}/messages`, { token });
  return page.body.data.map((m: { body: string }) => m.body).reverse();
}
