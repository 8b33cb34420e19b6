/**
 * The authorization matrix: every operation openapi.yaml describes (the API, incoming webhooks,
 * the settings screen, the event feed, the service's own pages) × every kind of subject × the
 * resources that decide (public, private, direct and archived channels; someone's subscription,
 * token, bot or incoming webhook). Each answer is checked against what decisions.md says, written
 * out here apart from the service's policy, and against openapi.yaml; a 404 for something hidden
 * must read exactly as the 404 for an unknown id. An operation openapi.yaml gains without a row
 * here fails the test, so no new route can skip the policy.
 */
import assert from "node:assert/strict";
import { addMemberAsOperator } from "../domain/channels/members.ts";
import { archiveChannel, createChannel, createDirectChannel } from "../domain/channels/channels.ts";
import { createIncoming, revokeIncomingById } from "../domain/webhooks/incoming.ts";
import { postMessage } from "../domain/messages/messages.ts";
import { createLoginLink } from "../domain/people/sessions.ts";
import { createToken, revokeTokenById } from "../domain/people/tokens.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import { type Scope, SCOPES, type Subject, type Team, type User } from "../core/types.ts";
import { type App } from "../core/app_records.ts";
import { createTeam, createUser } from "../domain/people/workspace.ts";
import { changeRole, deactivateUser } from "../domain/people/people.ts";
import { keys } from "../kv/keys.ts";
import { recentDeliveries } from "../kv/outbox/deliveries.ts";
import { startServer, type TestServer } from "./harness.ts";
import { authorizeQuery, pkce, registerApp } from "./oauth_client.ts";
import { installApp } from "../domain/apps/installs.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { issueAnswerWays } from "../domain/apps/responses.ts";
import { openView } from "../domain/apps/views.ts";
import { startThread } from "../domain/apps/agents.ts";
import { showEphemeral } from "../domain/messages/ephemeral.ts";
import { subjectOfPerson } from "../domain/principals.ts";
import { getUser } from "../kv/workspace.ts";
import type { Ctx } from "../domain/context.ts";
import { checkResponse, openApi } from "./openapi_check.ts";
import { receiver, waitUntil } from "./webhook_receivers.ts";

const PEOPLE = ["owner", "admin", "member", "botIn", "botOut", "foreign"] as const;
type Person = typeof PEOPLE[number];
/** Subjects whose every request is 401: a revoked or expired token, a deactivated user's. */
const ENDED = ["revoked", "expired", "deactivated", "deactivatedBot"] as const;
type ApiSubject = Person | `only:${Scope}` | typeof ENDED[number];
const API_SUBJECTS: ApiSubject[] = [
  ...PEOPLE,
  ...SCOPES.map((s) => `only:${s}` as const),
  ...ENDED,
];
const ended = (s: ApiSubject) => (ENDED as readonly string[]).includes(s);
const HUMANS = ["owner", "admin", "member", "foreign"] as const;
type Human = typeof HUMANS[number];
type ScreenSubject = Human | "anonymous";
const SCREEN_SUBJECTS: ScreenSubject[] = [...HUMANS, "anonymous"];

const KINDS = ["public", "private", "direct", "archived"] as const;
type Kind = typeof KINDS[number];

// What decisions.md says, for the fixtures below: team A has an owner (who creates every
// channel), an admin, a member, a bot in every channel and a bot in none; "foreign" owns team B.
// Every channel holds the owner and the bot in it; a direct message is theirs.
const inChannel = (p: Person) => p === "owner" || p === "botIn";
const isHuman = (p: Person) => (HUMANS as readonly string[]).includes(p);
/** A bot sees its channels; a human those and public ones; nobody another team's. */
const sees = (p: Person, k: Kind) =>
  p !== "foreign" && (inChannel(p) || (isHuman(p) && (k === "public" || k === "archived")));
/** Archive, unarchive and member changes: an admin also reaches a private channel it is not in. */
const seesAsAdmin = (p: Person, k: Kind) => sees(p, k) || (p === "admin" && k === "private");
const creatorOrAdmin = (p: Person) => p === "owner" || p === "admin";
/** A subscription: its owner, and the team's admins and owners. */
const seesSubscription = (p: Person, owner: Person) =>
  p !== "foreign" && (p === owner || p === "owner" || p === "admin");

interface ChannelFixture {
  id: string;
  messageId: string;
  /** The message's Slack-style `ts`, which the Web API names it by. */
  messageTs: string;
  /** A poll of the owner's. */
  pollId: string;
  /** A member the remove-member cells take out. */
  removeeId: string;
}

interface World {
  s: TestServer;
  team: Team;
  users: Record<Person, User>;
  subjects: Record<Person, Subject>;
  tokens: Record<ApiSubject, string>;
  /** A user of team A in no channel, for adding. */
  joiner: User;
  removee: User;
  /** Fixtures no cell changes, for the cells that only read. */
  shared: Record<Kind, ChannelFixture>;
  subs: Record<"member" | "botIn", { id: string; deliveryId: string }>;
  receiverUrl: string;
  /** An app installed in team A with a slash command answered by the receiver, and its bot. */
  app: App;
  appBot: string;
  command: string;
}

/** One request of a cell, and what it must answer. */
interface Cell {
  what: string;
  method: string;
  path: string;
  body?: unknown;
  expect: number;
  /** The same request naming an unknown resource, whose answer a hidden one must equal. */
  unknownPath?: string;
  /** The body of that request, where the body names the resource (the Slack Web API's). */
  unknownBody?: unknown;
  /** What a hidden resource answers: 404, or 422 where it is named in a field. */
  hidden?: 404 | 422;
  /** Checks a 200's content beyond its status (what a list shows). */
  check?: (body: unknown) => void;
}

type ApiRow = {
  surface: "api";
  /** Null: any token, whatever it holds. */
  scope: Scope | null;
  cells: (w: World, p: Person) => Promise<Omit<Cell, "method">[]>;
};
type ScreenRow = {
  surface: "screen";
  cells: (w: World, p: ScreenSubject) => Promise<Omit<Cell, "method">[]>;
};
type OpenRow = { surface: "open"; cells: (w: World) => Promise<Omit<Cell, "method">[]> };
/** A Slack Web API method: its scope (none for auth.test), and cells as for the REST API. */
type SlackRow = {
  surface: "slack";
  scope: Scope | null;
  cells: (w: World, p: Person) => Promise<Omit<Cell, "method">[]>;
};
type Row = ApiRow | ScreenRow | OpenRow | SlackRow;

const uuid = () => crypto.randomUUID();
const ch = (id: string) => `/api/v1/channels/${id}`;
const hook = (id: string) => `/api/v1/webhooks/${id}`;
const S = "/settings/integrations";

/** A fresh channel of `kind`, with a message of the owner's and a member to remove. */
async function channelOf(w: World, kind: Kind): Promise<ChannelFixture> {
  const { ctx } = w.s;
  const owner = w.subjects.owner;
  const poll = async (channelId: string) =>
    (await postMessage(ctx, owner, channelId, {
      ok: true,
      value: { body: "Which?", poll: { options: ["this", "that"] } },
    })).message.id;
  if (kind === "direct") {
    const dm = await createDirectChannel(ctx, [w.users.owner, w.users.botIn]);
    const posted = await postMessage(ctx, owner, dm.id, { ok: true, value: { body: "hi" } });
    return {
      id: dm.id,
      messageId: posted.message.id,
      messageTs: posted.message.ts!,
      pollId: await poll(dm.id),
      removeeId: w.users.botIn.id,
    };
  }
  const visibility = kind === "private" ? "private" : "public";
  const channel = await createChannel(ctx, owner, { name: `c-${uuid()}`, visibility });
  await addMemberAsOperator(ctx, channel.id, w.users.botIn);
  await addMemberAsOperator(ctx, channel.id, w.removee);
  const posted = await postMessage(ctx, owner, channel.id, { ok: true, value: { body: "hi" } });
  const pollId = await poll(channel.id);
  if (kind === "archived") await archiveChannel(ctx, owner, channel.id);
  return {
    id: channel.id,
    messageId: posted.message.id,
    messageTs: posted.message.ts!,
    pollId,
    removeeId: w.removee.id,
  };
}

/** Cells on a channel of each kind: `make` builds the request, `expect` the answer. */
function perKind(
  fresh: boolean,
  make: (f: ChannelFixture) => { path: string; body?: unknown; unknown: string },
  expect: (p: Person, k: Kind) => number,
): ApiRow["cells"] {
  return async (w, p) =>
    await Promise.all(KINDS.map(async (k) => {
      const f = fresh ? await channelOf(w, k) : w.shared[k];
      const { path, body, unknown } = make(f);
      return { what: k, path, body, expect: expect(p, k), unknownPath: unknown };
    }));
}

/** Cells on the member's and the bot's subscription. */
function perSubscription(
  make: (w: World, owner: "member" | "botIn") => Promise<{ path: string; body?: unknown }>,
  expect: (p: Person, owner: Person) => number,
): ApiRow["cells"] {
  return async (w, p) =>
    await Promise.all((["member", "botIn"] as const).map(async (owner) => {
      const { path, body } = await make(w, owner);
      const id = /webhooks\/([0-9a-f-]{36})/.exec(path)![1];
      return {
        what: `${owner}'s subscription`,
        path,
        body,
        expect: expect(p, owner),
        unknownPath: path.replace(id, uuid()),
      };
    }));
}

const onlyStatus = (status: number, path: string, body?: unknown): ApiRow["cells"] => () =>
  Promise.resolve([{ what: "-", path, body, expect: status }]);

const readOnly = (ok: number) => (p: Person, k: Kind) => sees(p, k) ? ok : 404;
const writes = (ok: number) => (p: Person, k: Kind) =>
  !sees(p, k) ? 404 : k === "archived" ? 403 : ok;
const ownMessage = (ok: number) => (p: Person, k: Kind) =>
  !sees(p, k) ? 404 : k === "archived" || p !== "owner" ? 403 : ok;
/** A channel's topic or purpose: its members set it, while it is not archived. */
const describes = (p: Person, k: Kind) =>
  !sees(p, k) ? 404 : k === "archived" || !inChannel(p) ? 403 : 200;
const archive = (archived: boolean) => (p: Person, k: Kind) => {
  if (!seesAsAdmin(p, k)) return 404;
  if (k === "direct" || !creatorOrAdmin(p)) return 403;
  return (k === "archived") === archived ? 422 : 200;
};
const managesSubscription = (ok: number) => (p: Person, owner: Person) =>
  seesSubscription(p, owner) ? ok : 404;

const ALL_SUBSCRIPTIONS = (w: World, p: Person) => (body: unknown) => {
  const listed = new Set((body as { data: { id: string }[] }).data.map((x) => x.id));
  for (const owner of ["member", "botIn"] as const) {
    assert.equal(listed.has(w.subs[owner].id), seesSubscription(p, owner), `${p} lists ${owner}'s`);
  }
};

/** A subscription of `owner`'s made for one cell (the cells that delete it). */
async function freshSubscription(
  w: World,
  owner: "member" | "botIn" | "admin",
): Promise<string> {
  const res = await fetch(`${w.s.url}/api/v1/webhooks`, {
    method: "POST",
    headers: { Authorization: `Bearer ${w.tokens[owner]}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "fresh", url: w.receiverUrl, events: ["reaction.added"] }),
  });
  assert.equal(res.status, 201);
  return (await res.json()).data.id;
}

const MODAL = {
  type: "modal",
  title: { type: "plain_text", text: "Matrix" },
  blocks: [{
    type: "input",
    block_id: "b",
    label: { type: "plain_text", text: "Say" },
    element: { type: "plain_text_input", action_id: "a" },
  }, {
    type: "actions",
    block_id: "acts",
    elements: [{ type: "button", action_id: "go", text: { type: "plain_text", text: "Go" } }],
  }],
};

/** A trigger the app was given for the owner, in the public channel (as a command run gives it). */
const ownersTrigger = async (w: World) =>
  (await issueAnswerWays(w.s.ctx, {
    app: w.app,
    teamId: w.team.id,
    channelId: w.shared.public.id,
    userId: w.users.owner.id,
    botId: w.appBot,
    messageId: null,
  })).trigger_id;

/** A modal the app opened for the owner, fresh for the cells that close it. */
async function ownersView(w: World): Promise<string> {
  const bot = (await getUser(w.s.ctx.kv, w.appBot))!;
  const opened = await openView(w.s.ctx, subjectOfPerson(bot), {
    triggerId: await ownersTrigger(w),
    view: MODAL,
  });
  return opened.id;
}

/** An ephemeral message of the app's, with a button, shown to the owner in the public channel. */
async function ownersEphemeral(w: World): Promise<string> {
  const shown = await showEphemeral(w.s.ctx, {
    userId: w.users.owner.id,
    teamId: w.team.id,
    ephemeral: {
      channel_id: w.shared.public.id,
      text: "Press",
      blocks: MODAL.blocks.slice(1),
      app_id: w.app.id,
    },
    from: { appId: w.app.id, botId: w.appBot },
  });
  return shown.id!;
}

/** A thread the owner started with the world's agent: its `ts`. */
async function ownersThread(w: World): Promise<string> {
  const owner = await authenticate(w.s.ctx, w.tokens.owner);
  const thread = await startThread(w.s.ctx, owner, { appId: w.app.id, contextChannelId: null });
  return thread.thread_ts!;
}

/** Cells on a view of the owner's: the owner `ok`, anyone else the 404 an unknown view gets. */
const ownersViewCells = (
  verb: "" | "/submit" | "/actions" | "/close" | "/options?action_id=menu",
  ok: number,
  body?: unknown,
): ApiRow["cells"] =>
async (w, p) => [{
  what: "the owner's view",
  path: `/api/v1/views/${await ownersView(w)}${verb}`,
  body,
  expect: p === "owner" ? ok : 404,
  unknownPath: `/api/v1/views/${uuid()}${verb}`,
}];

const API: Record<string, ApiRow> = {
  "GET /api/v1/channels": {
    surface: "api",
    scope: "channels:read",
    cells: onlyStatus(200, "/api/v1/channels"),
  },
  "POST /api/v1/channels": {
    surface: "api",
    scope: "channels:write",
    cells: () =>
      Promise.resolve([{
        what: "-",
        path: "/api/v1/channels",
        body: { name: `n-${uuid()}`, visibility: "public" },
        expect: 201,
      }]),
  },
  "GET /api/v1/channels/{channel}": {
    surface: "api",
    scope: "channels:read",
    cells: perKind(false, (f) => ({ path: ch(f.id), unknown: ch(uuid()) }), readOnly(200)),
  },
  "PATCH /api/v1/channels/{channel}": {
    surface: "api",
    scope: "channels:write",
    // A name: its creator or an admin; a topic: its members. Neither in an archived channel.
    cells: async (w, p) => [
      ...await perKind(
        true,
        (f) => ({ path: ch(f.id), body: { name: `p-${uuid()}` }, unknown: ch(uuid()) }),
        (p, k) => {
          if (!seesAsAdmin(p, k)) return 404;
          return k === "direct" || k === "archived" || !creatorOrAdmin(p) ? 403 : 200;
        },
      )(w, p),
      ...await perKind(
        false,
        (f) => ({ path: ch(f.id), body: { topic: "matrix" }, unknown: ch(uuid()) }),
        describes,
      )(w, p),
    ],
  },
  "POST /api/v1/channels/{channel}/archive": {
    surface: "api",
    scope: "channels:write",
    cells: perKind(
      true,
      (f) => ({ path: `${ch(f.id)}/archive`, unknown: `${ch(uuid())}/archive` }),
      archive(true),
    ),
  },
  "POST /api/v1/channels/{channel}/unarchive": {
    surface: "api",
    scope: "channels:write",
    cells: perKind(
      true,
      (f) => ({ path: `${ch(f.id)}/unarchive`, unknown: `${ch(uuid())}/unarchive` }),
      archive(false),
    ),
  },
  "GET /api/v1/channels/{channel}/messages": {
    surface: "api",
    scope: "messages:read",
    cells: perKind(
      false,
      (f) => ({ path: `${ch(f.id)}/messages`, unknown: `${ch(uuid())}/messages` }),
      readOnly(200),
    ),
  },
  "POST /api/v1/channels/{channel}/messages": {
    surface: "api",
    scope: "messages:write",
    cells: perKind(
      false,
      (f) => ({
        path: `${ch(f.id)}/messages`,
        body: { body: "matrix" },
        unknown: `${ch(uuid())}/messages`,
      }),
      writes(201),
    ),
  },
  "GET /api/v1/channels/{channel}/messages/{message}": {
    surface: "api",
    scope: "messages:read",
    cells: perKind(
      false,
      (f) => ({
        path: `${ch(f.id)}/messages/${f.messageId}`,
        unknown: `${ch(uuid())}/messages/${f.messageId}`,
      }),
      readOnly(200),
    ),
  },
  "PATCH /api/v1/channels/{channel}/messages/{message}": {
    surface: "api",
    scope: "messages:write",
    cells: perKind(
      true,
      (f) => ({
        path: `${ch(f.id)}/messages/${f.messageId}`,
        body: { body: "edited" },
        unknown: `${ch(uuid())}/messages/${f.messageId}`,
      }),
      ownMessage(200),
    ),
  },
  "DELETE /api/v1/channels/{channel}/messages/{message}": {
    surface: "api",
    scope: "messages:write",
    cells: perKind(
      true,
      (f) => ({
        path: `${ch(f.id)}/messages/${f.messageId}`,
        unknown: `${ch(uuid())}/messages/${f.messageId}`,
      }),
      ownMessage(204),
    ),
  },
  "PUT /api/v1/channels/{channel}/messages/{message}/reactions/{emoji}": {
    surface: "api",
    scope: "reactions:write",
    cells: perKind(
      false,
      (f) => ({
        path: `${ch(f.id)}/messages/${f.messageId}/reactions/%F0%9F%91%8D`,
        unknown: `${ch(uuid())}/messages/${f.messageId}/reactions/%F0%9F%91%8D`,
      }),
      writes(204),
    ),
  },
  "DELETE /api/v1/channels/{channel}/messages/{message}/reactions/{emoji}": {
    surface: "api",
    scope: "reactions:write",
    cells: perKind(
      false,
      (f) => ({
        path: `${ch(f.id)}/messages/${f.messageId}/reactions/%F0%9F%91%8D`,
        unknown: `${ch(uuid())}/messages/${f.messageId}/reactions/%F0%9F%91%8D`,
      }),
      writes(204),
    ),
  },
  "PUT /api/v1/channels/{channel}/messages/{message}/votes/{option}": {
    surface: "api",
    scope: "reactions:write",
    cells: perKind(
      false,
      (f) => ({
        path: `${ch(f.id)}/messages/${f.pollId}/votes/1`,
        unknown: `${ch(uuid())}/messages/${f.pollId}/votes/1`,
      }),
      writes(204),
    ),
  },
  "DELETE /api/v1/channels/{channel}/messages/{message}/votes/{option}": {
    surface: "api",
    scope: "reactions:write",
    cells: perKind(
      false,
      (f) => ({
        path: `${ch(f.id)}/messages/${f.pollId}/votes/1`,
        unknown: `${ch(uuid())}/messages/${f.pollId}/votes/1`,
      }),
      writes(204),
    ),
  },
  "GET /api/v1/channels/{channel}/messages/{message}/votes/{option}": {
    surface: "api",
    scope: "messages:read",
    cells: perKind(
      false,
      (f) => ({
        path: `${ch(f.id)}/messages/${f.pollId}/votes/1`,
        unknown: `${ch(uuid())}/messages/${f.pollId}/votes/1`,
      }),
      readOnly(200),
    ),
  },
  "POST /api/v1/channels/{channel}/messages/{message}/close": {
    surface: "api",
    scope: "messages:write",
    cells: perKind(
      true,
      (f) => ({
        path: `${ch(f.id)}/messages/${f.pollId}/close`,
        unknown: `${ch(uuid())}/messages/${f.pollId}/close`,
      }),
      (p, k) => {
        if (!sees(p, k)) return 404;
        if (k === "archived") return 403;
        return p === "owner" || p === "admin" ? 200 : 403;
      },
    ),
  },
  "GET /api/v1/channels/{channel}/members": {
    surface: "api",
    scope: "members:read",
    cells: perKind(
      false,
      (f) => ({ path: `${ch(f.id)}/members`, unknown: `${ch(uuid())}/members` }),
      readOnly(200),
    ),
  },
  "POST /api/v1/channels/{channel}/members": {
    surface: "api",
    scope: "members:write",
    cells: async (w, p) =>
      await perKind(
        true,
        (f) => ({
          path: `${ch(f.id)}/members`,
          body: { user_id: w.joiner.id },
          unknown: `${ch(uuid())}/members`,
        }),
        (p, k) => !seesAsAdmin(p, k) ? 404 : k === "direct" || k === "archived" ? 403 : 201,
      )(w, p),
  },
  "DELETE /api/v1/channels/{channel}/members/{user}": {
    surface: "api",
    scope: "members:write",
    cells: perKind(
      true,
      (f) => ({
        path: `${ch(f.id)}/members/${f.removeeId}`,
        unknown: `${ch(uuid())}/members/${f.removeeId}`,
      }),
      (p, k) => {
        if (!seesAsAdmin(p, k)) return 404;
        if (k === "direct" || k === "archived") return 403;
        return creatorOrAdmin(p) ? 204 : 403;
      },
    ),
  },
  "PATCH /api/v1/users/{user}": {
    surface: "api",
    scope: "members:write",
    // The member's email: the team's admins only, not the member itself; nobody elsewhere.
    cells: (w, p) =>
      Promise.resolve([{
        what: "the member's email",
        path: `/api/v1/users/${w.users.member.id}`,
        body: { email: null },
        expect: p === "foreign" ? 404 : creatorOrAdmin(p) ? 200 : 403,
        unknownPath: `/api/v1/users/${uuid()}`,
      }]),
  },
  "GET /api/v1/webhooks": {
    surface: "api",
    scope: "webhooks:read",
    cells: (w, p) =>
      Promise.resolve([{
        what: "what is listed",
        path: "/api/v1/webhooks",
        expect: 200,
        check: ALL_SUBSCRIPTIONS(w, p),
      }]),
  },
  "POST /api/v1/webhooks": {
    surface: "api",
    scope: "webhooks:write",
    cells: (w) =>
      Promise.resolve([{
        what: "-",
        path: "/api/v1/webhooks",
        body: { name: "mine", url: w.receiverUrl, events: ["reaction.added"] },
        expect: 201,
      }]),
  },
  "GET /api/v1/webhooks/{webhookSubscription}": {
    surface: "api",
    scope: "webhooks:read",
    cells: perSubscription(
      (w, o) => Promise.resolve({ path: hook(w.subs[o].id) }),
      managesSubscription(200),
    ),
  },
  "PATCH /api/v1/webhooks/{webhookSubscription}": {
    surface: "api",
    scope: "webhooks:write",
    cells: async (w, p) => [
      ...await perSubscription(
        (w, o) => Promise.resolve({ path: hook(w.subs[o].id), body: { name: "renamed" } }),
        managesSubscription(200),
      )(w, p),
      ...await perSubscription(
        (w, o) => Promise.resolve({ path: hook(w.subs[o].id), body: { url: w.receiverUrl } }),
        (p, owner) => !seesSubscription(p, owner) ? 404 : p === owner ? 200 : 403,
      )(w, p),
    ],
  },
  "DELETE /api/v1/webhooks/{webhookSubscription}": {
    surface: "api",
    scope: "webhooks:write",
    cells: perSubscription(
      async (w, o) => ({ path: hook(await freshSubscription(w, o)) }),
      managesSubscription(204),
    ),
  },
  "POST /api/v1/webhooks/{webhookSubscription}/deliveries/{delivery}/redeliver": {
    surface: "api",
    scope: "webhooks:write",
    cells: perSubscription(
      async (w, o) => ({
        path: `${hook(w.subs[o].id)}/deliveries/${await latestDelivery(w, o)}/redeliver`,
      }),
      managesSubscription(202),
    ),
  },
  "POST /api/v1/webhooks/{webhookSubscription}/recover": {
    surface: "api",
    scope: "webhooks:write",
    cells: perSubscription(
      (w, o) =>
        Promise.resolve({
          path: `${hook(w.subs[o].id)}/recover`,
          body: { since: new Date(Date.now() - 60_000).toISOString() },
        }),
      managesSubscription(202),
    ),
  },
  "POST /api/v1/webhooks/{webhookSubscription}/test": {
    surface: "api",
    scope: "webhooks:write",
    cells: perSubscription(
      (w, o) => Promise.resolve({ path: `${hook(w.subs[o].id)}/test` }),
      managesSubscription(202),
    ),
  },
  "GET /api/v1/events": {
    surface: "api",
    scope: "messages:read",
    cells: async (w, p) => [
      {
        what: "the feed shows only channels the subject sees",
        path: "/api/v1/events?limit=100",
        expect: 200,
        check: (body) => {
          const seen = new Set(
            (body as { data: { data: { channel_id: string } }[] }).data.map((e) =>
              e.data.channel_id
            ),
          );
          for (const k of KINDS) {
            assert.equal(seen.has(w.shared[k].id), sees(p, k), `${p}'s feed and the ${k} channel`);
          }
        },
      },
      ...await perKind(
        false,
        (f) => ({
          path: `/api/v1/events?channel_id=${f.id}`,
          unknown: `/api/v1/events?channel_id=${uuid()}`,
        }),
        readOnly(200),
      )(w, p),
    ],
  },
  "GET /api/v1/events/stream": {
    surface: "api",
    scope: "messages:read",
    cells: async (w, p) =>
      (await perKind(
        false,
        (f) => ({
          path: `/api/v1/events/stream?channel_ids=${f.id}`,
          unknown: `/api/v1/events/stream?channel_ids=${uuid()}`,
        }),
        (p, k) => sees(p, k) ? 200 : 422,
      )(w, p)).map((cell) => ({ ...cell, hidden: 422 })),
  },
  "POST /api/v1/channels/{channel}/messages/{message}/actions": {
    surface: "api",
    scope: "messages:write",
    cells: perKind(
      false,
      (f) => ({
        path: `${ch(f.id)}/messages/${f.messageId}/actions`,
        body: { action_id: "nothing-here" },
        unknown: `${ch(uuid())}/messages/${f.messageId}/actions`,
      }),
      (p, k) => !sees(p, k) ? 404 : !isHuman(p) || k === "archived" ? 403 : 422,
    ),
  },
  "POST /api/v1/channels/{channel}/messages/{message}/shortcuts": {
    surface: "api",
    scope: "messages:write",
    cells: async (w, p) =>
      await perKind(
        false,
        (f) => ({
          path: `${ch(f.id)}/messages/${f.messageId}/shortcuts`,
          body: { app_id: w.app.id, callback_id: "mxm" },
          unknown: `${ch(uuid())}/messages/${f.messageId}/shortcuts`,
        }),
        (p, k) => !sees(p, k) ? 404 : !isHuman(p) ? 403 : 200,
      )(w, p),
  },
  "GET /api/v1/channels/{channel}/messages/{message}/options": {
    surface: "api",
    scope: "messages:write",
    cells: perKind(
      false,
      (f) => ({
        path: `${ch(f.id)}/messages/${f.messageId}/options?action_id=menu`,
        unknown: `${ch(uuid())}/messages/${f.messageId}/options?action_id=menu`,
      }),
      (p, k) => !sees(p, k) ? 404 : !isHuman(p) ? 403 : 422,
    ),
  },
  "POST /api/v1/ephemeral/{id}/actions": {
    surface: "api",
    scope: "messages:write",
    // Only its person finds it; the owner is told the element is not in it.
    cells: async (w, p) => [{
      what: "the owner's ephemeral message",
      path: `/api/v1/ephemeral/${await ownersEphemeral(w)}/actions`,
      body: { action_id: "nothing-here" },
      expect: p === "owner" ? 422 : 404,
      unknownPath: `/api/v1/ephemeral/${uuid()}/actions`,
    }],
  },
  "GET /api/v1/shortcuts": {
    surface: "api",
    scope: "messages:write",
    cells: (_w, p) =>
      Promise.resolve([{
        what: "what is listed",
        path: "/api/v1/shortcuts",
        expect: 200,
        check: (body) => {
          const listed = (body as { data: { callback_id: string }[] }).data.map((c) =>
            c.callback_id
          );
          assert.deepEqual(listed, p === "foreign" ? [] : ["mx", "mxm"], `${p} lists`);
        },
      }]),
  },
  "POST /api/v1/apps/{app}/shortcuts/{callback_id}": {
    surface: "api",
    scope: "messages:write",
    cells: (w, p) =>
      Promise.resolve([{
        what: "a global shortcut",
        path: `/api/v1/apps/${w.app.id}/shortcuts/mx`,
        expect: p === "foreign" ? 404 : isHuman(p) ? 200 : 403,
        unknownPath: `/api/v1/apps/${uuid()}/shortcuts/mx`,
      }]),
  },
  "GET /api/v1/apps/{app}/home": {
    surface: "api",
    scope: "messages:read",
    // A person of the team opens it; a bot is refused; another team has no such app.
    cells: (w, p) =>
      Promise.resolve([{
        what: "the app's Home",
        path: `/api/v1/apps/${w.app.id}/home`,
        expect: p === "foreign" ? 404 : isHuman(p) ? 200 : 403,
        unknownPath: `/api/v1/apps/${uuid()}/home`,
      }]),
  },
  "POST /api/v1/apps/{app}/threads": {
    surface: "api",
    scope: "messages:write",
    // A person of the team starts one with the team's agent; a bot is refused.
    cells: (w, p) =>
      Promise.resolve([{
        what: "a thread with the agent",
        path: `/api/v1/apps/${w.app.id}/threads`,
        body: {},
        expect: p === "foreign" ? 404 : isHuman(p) ? 201 : 403,
        unknownPath: `/api/v1/apps/${uuid()}/threads`,
      }]),
  },
  "GET /api/v1/apps/{app}/threads/{thread_ts}": {
    surface: "api",
    scope: "messages:read",
    // Its person reads it; anyone else finds no such thread in their own conversation.
    cells: async (w, p) => [{
      what: "the owner's thread",
      path: `/api/v1/apps/${w.app.id}/threads/${await ownersThread(w)}`,
      expect: p === "owner" ? 200 : isHuman(p) ? 404 : p === "foreign" ? 404 : 403,
      unknownPath: `/api/v1/apps/${w.app.id}/threads/1.000001`,
    }],
  },
  "PUT /api/v1/apps/{app}/threads/{thread_ts}/context": {
    surface: "api",
    scope: "messages:write",
    cells: async (w, p) => [{
      what: "the owner's thread",
      path: `/api/v1/apps/${w.app.id}/threads/${await ownersThread(w)}/context`,
      body: { channel_id: null },
      expect: p === "owner" ? 200 : isHuman(p) ? 404 : p === "foreign" ? 404 : 403,
      unknownPath: `/api/v1/apps/${w.app.id}/threads/1.000001/context`,
    }],
  },
  "PUT /api/v1/apps/{app}/context": {
    surface: "api",
    scope: "messages:write",
    cells: (w, p) =>
      Promise.resolve([{
        what: "what the person looks at beside the agent",
        path: `/api/v1/apps/${w.app.id}/context`,
        body: { channel_id: null },
        expect: p === "foreign" ? 404 : isHuman(p) ? 200 : 403,
        unknownPath: `/api/v1/apps/${uuid()}/context`,
      }]),
  },
  "GET /api/v1/views/{view}": {
    surface: "api",
    scope: "messages:read",
    cells: ownersViewCells("", 200),
  },
  "POST /api/v1/views/{view}/submit": {
    surface: "api",
    scope: "messages:write",
    cells: ownersViewCells("/submit", 200, { values: { b: { a: { value: "hi" } } } }),
  },
  "POST /api/v1/views/{view}/actions": {
    surface: "api",
    scope: "messages:write",
    cells: ownersViewCells("/actions", 200, { action_id: "go" }),
  },
  "GET /api/v1/views/{view}/options": {
    surface: "api",
    scope: "messages:write",
    // The owner's view has no external menu of that name: the owner is told so.
    cells: ownersViewCells("/options?action_id=menu", 422),
  },
  "POST /api/v1/views/{view}/close": {
    surface: "api",
    scope: "messages:write",
    cells: ownersViewCells("/close", 204),
  },
  "GET /api/v1/event-types": {
    surface: "api",
    scope: null,
    cells: () =>
      Promise.resolve([{
        what: "the catalog",
        path: "/api/v1/event-types",
        expect: 200,
        check: (body) => {
          const types = (body as { data: { type: string }[] }).data.map((t) => t.type);
          assert.ok(types.includes("message.created") && types.includes("ping"), "every type");
        },
      }]),
  },
  "GET /api/v1/commands": {
    surface: "api",
    scope: "messages:write",
    cells: (w, p) =>
      Promise.resolve([{
        what: "what is listed",
        path: "/api/v1/commands",
        expect: 200,
        check: (body) => {
          const listed = (body as { data: { command: string }[] }).data.map((c) => c.command);
          assert.deepEqual(listed, p === "foreign" ? [] : [w.command], `${p} lists`);
        },
      }]),
  },
  "POST /api/v1/channels/{channel}/commands": {
    surface: "api",
    scope: "messages:write",
    cells: async (w, p) =>
      await perKind(
        false,
        (f) => ({
          path: `${ch(f.id)}/commands`,
          body: { command: w.command, text: "matrix" },
          unknown: `${ch(uuid())}/commands`,
        }),
        (p, k) => {
          if (!sees(p, k)) return 404;
          if (!isHuman(p)) return 403;
          return k === "archived" ? 422 : 200;
        },
      )(w, p),
  },
};

const slack = (method: string) => `/api/slack/${method}`;

/** Web API cells on a channel of each kind: `params` names it, as the REST path does. */
function slackPerKind(
  method: string,
  fresh: boolean,
  params: (f: ChannelFixture, w: World) => Record<string, string>,
  expect: (p: Person, k: Kind) => number,
): SlackRow["cells"] {
  return async (w, p) =>
    await Promise.all(KINDS.map(async (k) => {
      const f = fresh ? await channelOf(w, k) : w.shared[k];
      const body = params(f, w);
      return {
        what: k,
        path: slack(method),
        body,
        expect: expect(p, k),
        unknownPath: slack(method),
        unknownBody: { ...body, channel: uuid() },
      };
    }));
}

const slackOnce = (method: string, body: Record<string, string> = {}): SlackRow["cells"] => () =>
  Promise.resolve([{ what: "-", path: slack(method), body, expect: 200 }]);

/**
 * Slack's Web API answers 200 with `ok` and Slack's code; each code stands for the REST API's
 * status for the same refusal, so one expectation holds for both.
 */
const SLACK_STATUS: Record<string, number> = {
  not_authed: 401,
  invalid_auth: 401,
  token_revoked: 401,
  token_expired: 401,
  account_inactive: 401,
  missing_scope: 403,
  not_in_channel: 403,
  is_archived: 403,
  restricted_action: 403,
  not_authorized: 403,
  method_not_supported_for_channel_type: 403,
  cant_archive_general: 403,
  cant_kick_from_general: 403,
  cant_leave_general: 403,
  cant_update_message: 403,
  cant_delete_message: 403,
  channel_not_found: 404,
  message_not_found: 404,
  user_not_found: 404,
  users_not_found: 404,
  invalid_scheduled_message_id: 404,
  not_found: 404,
};

const SLACK: Record<string, SlackRow> = {
  "POST /api/slack/auth.test": { surface: "slack", scope: null, cells: slackOnce("auth.test") },
  "POST /api/slack/chat.postMessage": {
    surface: "slack",
    scope: "messages:write",
    cells: slackPerKind(
      "chat.postMessage",
      false,
      (f) => ({ channel: f.id, text: "m" }),
      writes(200),
    ),
  },
  "POST /api/slack/chat.postEphemeral": {
    surface: "slack",
    scope: "messages:write",
    cells: slackPerKind(
      "chat.postEphemeral",
      false,
      (f, w) => ({ channel: f.id, user: w.users.owner.id, text: "only you" }),
      writes(200),
    ),
  },
  "POST /api/slack/chat.scheduleMessage": {
    surface: "slack",
    scope: "messages:write",
    cells: slackPerKind(
      "chat.scheduleMessage",
      false,
      (f) => ({
        channel: f.id,
        text: "later",
        post_at: String(Math.floor(Date.now() / 1000) + 3_600),
      }),
      writes(200),
    ),
  },
  "POST /api/slack/chat.deleteScheduledMessage": {
    surface: "slack",
    scope: "messages:write",
    // Only one's own scheduled messages: one nobody made is unknown to everyone.
    cells: (w) =>
      Promise.resolve([{
        what: "an unknown scheduled message",
        path: slack("chat.deleteScheduledMessage"),
        body: { channel: w.team.general_channel_id, scheduled_message_id: uuid() },
        expect: 404,
      }]),
  },
  "POST /api/slack/chat.scheduledMessages.list": {
    surface: "slack",
    scope: "messages:write",
    cells: slackOnce("chat.scheduledMessages.list"),
  },
  "POST /api/slack/chat.update": {
    surface: "slack",
    scope: "messages:write",
    cells: slackPerKind(
      "chat.update",
      true,
      (f) => ({ channel: f.id, ts: f.messageTs, text: "edited" }),
      ownMessage(200),
    ),
  },
  "POST /api/slack/chat.delete": {
    surface: "slack",
    scope: "messages:write",
    cells: slackPerKind(
      "chat.delete",
      true,
      (f) => ({ channel: f.id, ts: f.messageTs }),
      ownMessage(200),
    ),
  },
  "POST /api/slack/chat.startStream": {
    surface: "slack",
    scope: "messages:write",
    cells: slackPerKind(
      "chat.startStream",
      false,
      (f, w) => ({
        channel: f.id,
        thread_ts: f.messageTs,
        recipient_user_id: w.users.owner.id,
        recipient_team_id: w.team.id,
        markdown_text: "Thinking",
      }),
      writes(200),
    ),
  },
  // Only its author streams into a message, and only while it streams: the fixture's never did.
  ...Object.fromEntries(
    ["chat.appendStream", "chat.stopStream"].map((m) => [
      `POST /api/slack/${m}`,
      {
        surface: "slack",
        scope: "messages:write",
        cells: slackPerKind(
          m,
          false,
          (f) => ({ channel: f.id, ts: f.messageTs, markdown_text: "more" }),
          ownMessage(422),
        ),
      } satisfies SlackRow,
    ]),
  ),
  "POST /api/slack/chat.getPermalink": {
    surface: "slack",
    scope: "messages:read",
    cells: slackPerKind(
      "chat.getPermalink",
      false,
      (f) => ({ channel: f.id, message_ts: f.messageTs }),
      readOnly(200),
    ),
  },
  "POST /api/slack/conversations.list": {
    surface: "slack",
    scope: "channels:read",
    cells: slackOnce("conversations.list"),
  },
  "POST /api/slack/conversations.info": {
    surface: "slack",
    scope: "channels:read",
    cells: slackPerKind("conversations.info", false, (f) => ({ channel: f.id }), readOnly(200)),
  },
  "POST /api/slack/conversations.history": {
    surface: "slack",
    scope: "messages:read",
    cells: slackPerKind("conversations.history", false, (f) => ({ channel: f.id }), readOnly(200)),
  },
  "POST /api/slack/conversations.replies": {
    surface: "slack",
    scope: "messages:read",
    cells: slackPerKind(
      "conversations.replies",
      false,
      (f) => ({ channel: f.id, ts: f.messageTs }),
      readOnly(200),
    ),
  },
  "POST /api/slack/conversations.members": {
    surface: "slack",
    scope: "members:read",
    cells: slackPerKind("conversations.members", false, (f) => ({ channel: f.id }), readOnly(200)),
  },
  "POST /api/slack/users.info": {
    surface: "slack",
    scope: "members:read",
    cells: (w, p) =>
      Promise.resolve([{
        what: "a person of team A",
        path: slack("users.info"),
        body: { user: w.users.owner.id },
        expect: p === "foreign" ? 404 : 200,
        unknownPath: slack("users.info"),
        unknownBody: { user: uuid() },
      }]),
  },
  "POST /api/slack/users.profile.get": {
    surface: "slack",
    scope: "members:read",
    cells: (w, p) =>
      Promise.resolve([{
        what: "a person of team A",
        path: slack("users.profile.get"),
        body: { user: w.users.owner.id },
        expect: p === "foreign" ? 404 : 200,
        unknownPath: slack("users.profile.get"),
        unknownBody: { user: uuid() },
      }]),
  },
  "POST /api/slack/users.lookupByEmail": {
    surface: "slack",
    scope: "users:read.email",
    // Nobody here has an address: whoever may look is told so.
    cells: () =>
      Promise.resolve([{
        what: "an address nobody has",
        path: slack("users.lookupByEmail"),
        body: { email: "nobody@example.com" },
        expect: 404,
      }]),
  },
  "POST /api/slack/users.conversations": {
    surface: "slack",
    scope: "channels:read",
    cells: slackOnce("users.conversations"),
  },
  "POST /api/slack/conversations.open": {
    surface: "slack",
    scope: "messages:write",
    // A DM with the owner: anyone else of team A opens one; the owner can't with itself.
    cells: (w, p) =>
      Promise.resolve([{
        what: "with the owner",
        path: slack("conversations.open"),
        body: { users: w.users.owner.id },
        expect: p === "foreign" || p === "owner" ? 422 : 200,
      }]),
  },
  "POST /api/slack/conversations.join": {
    surface: "slack",
    scope: "members:write",
    // What one sees one joins (already in: ok); no bot here is an app's with channels:join.
    cells: slackPerKind(
      "conversations.join",
      false,
      (f) => ({ channel: f.id }),
      (p, k) => !sees(p, k) ? 404 : k === "direct" || k === "archived" ? 403 : 200,
    ),
  },
  "POST /api/slack/conversations.create": {
    surface: "slack",
    scope: "channels:write",
    // Anyone makes a channel in its own team.
    cells: () =>
      Promise.resolve([{
        what: "a new name",
        path: slack("conversations.create"),
        body: { name: `m-${uuid()}` },
        expect: 200,
      }]),
  },
  "POST /api/slack/conversations.archive": {
    surface: "slack",
    scope: "channels:write",
    cells: slackPerKind("conversations.archive", true, (f) => ({ channel: f.id }), archive(true)),
  },
  "POST /api/slack/conversations.unarchive": {
    surface: "slack",
    scope: "channels:write",
    cells: slackPerKind(
      "conversations.unarchive",
      true,
      (f) => ({ channel: f.id }),
      archive(false),
    ),
  },
  "POST /api/slack/conversations.rename": {
    surface: "slack",
    scope: "channels:write",
    cells: slackPerKind(
      "conversations.rename",
      true,
      (f) => ({ channel: f.id, name: `r-${uuid()}` }),
      (p, k) => {
        if (!seesAsAdmin(p, k)) return 404;
        return k === "direct" || k === "archived" || !creatorOrAdmin(p) ? 403 : 200;
      },
    ),
  },
  "POST /api/slack/conversations.setTopic": {
    surface: "slack",
    scope: "channels:write",
    cells: slackPerKind(
      "conversations.setTopic",
      true,
      (f) => ({ channel: f.id, topic: "matrix" }),
      describes,
    ),
  },
  "POST /api/slack/conversations.setPurpose": {
    surface: "slack",
    scope: "channels:write",
    cells: slackPerKind(
      "conversations.setPurpose",
      true,
      (f) => ({ channel: f.id, purpose: "matrix" }),
      describes,
    ),
  },
  "POST /api/slack/conversations.invite": {
    surface: "slack",
    scope: "members:write",
    cells: slackPerKind(
      "conversations.invite",
      true,
      (f, w) => ({ channel: f.id, users: w.joiner.id }),
      (p, k) => !seesAsAdmin(p, k) ? 404 : k === "direct" || k === "archived" ? 403 : 200,
    ),
  },
  "POST /api/slack/conversations.kick": {
    surface: "slack",
    scope: "channels:write",
    cells: slackPerKind(
      "conversations.kick",
      true,
      (f) => ({ channel: f.id, user: f.removeeId }),
      (p, k) => {
        if (!seesAsAdmin(p, k)) return 404;
        // A direct message's other member is the bot itself: `cant_kick_self`.
        if (p === "botIn" && k === "direct") return 422;
        if (k === "direct" || k === "archived") return 403;
        return creatorOrAdmin(p) ? 200 : 403;
      },
    ),
  },
  "POST /api/slack/conversations.leave": {
    surface: "slack",
    scope: "channels:write",
    // Not in it: ok, `not_in_channel`; in it, the channel's own rules.
    cells: slackPerKind("conversations.leave", true, (f) => ({ channel: f.id }), (p, k) => {
      if (!seesAsAdmin(p, k)) return 404;
      if (!inChannel(p)) return 200;
      return k === "direct" || k === "archived" ? 403 : 200;
    }),
  },
  "POST /api/slack/pins.list": {
    surface: "slack",
    scope: "messages:read",
    cells: slackPerKind("pins.list", false, (f) => ({ channel: f.id }), readOnly(200)),
  },
  "POST /api/slack/pins.remove": {
    surface: "slack",
    scope: "messages:write",
    // Nothing is pinned: whoever may post there is told so.
    cells: slackPerKind(
      "pins.remove",
      false,
      (f) => ({ channel: f.id, timestamp: f.messageTs }),
      writes(422),
    ),
  },
  "POST /api/slack/pins.add": {
    surface: "slack",
    scope: "messages:write",
    cells: slackPerKind(
      "pins.add",
      true,
      (f) => ({ channel: f.id, timestamp: f.messageTs }),
      writes(200),
    ),
  },
  "POST /api/slack/team.info": { surface: "slack", scope: null, cells: slackOnce("team.info") },
  "POST /api/slack/emoji.list": { surface: "slack", scope: null, cells: slackOnce("emoji.list") },
  "POST /api/slack/bots.info": {
    surface: "slack",
    scope: "members:read",
    cells: (w, p) =>
      Promise.resolve([{
        what: "the app's bot",
        path: slack("bots.info"),
        body: { bot: w.appBot },
        expect: p === "foreign" ? 422 : 200,
      }]),
  },
  "POST /api/slack/reactions.get": {
    surface: "slack",
    scope: "messages:read",
    cells: slackPerKind(
      "reactions.get",
      false,
      (f) => ({ channel: f.id, timestamp: f.messageTs }),
      readOnly(200),
    ),
  },
  "POST /api/slack/users.list": {
    surface: "slack",
    scope: "members:read",
    cells: slackOnce("users.list"),
  },
  "POST /api/slack/reactions.add": {
    surface: "slack",
    scope: "reactions:write",
    cells: slackPerKind(
      "reactions.add",
      false,
      (f) => ({ channel: f.id, timestamp: f.messageTs, name: "thumbsup" }),
      writes(200),
    ),
  },
  "POST /api/slack/views.open": {
    surface: "slack",
    scope: null,
    cells: async (w) => [{
      what: "a trigger issued to another app's bot",
      path: slack("views.open"),
      body: { trigger_id: await ownersTrigger(w), view: JSON.stringify(MODAL) },
      expect: 422,
    }],
  },
  "POST /api/slack/views.push": {
    surface: "slack",
    scope: null,
    cells: async (w) => [{
      what: "a trigger issued to another app's bot",
      path: slack("views.push"),
      body: { trigger_id: await ownersTrigger(w), view: JSON.stringify(MODAL) },
      expect: 422,
    }],
  },
  "POST /api/slack/views.update": {
    surface: "slack",
    scope: null,
    cells: async (w) => [{
      what: "another app's view",
      path: slack("views.update"),
      body: { view_id: await ownersView(w), view: JSON.stringify(MODAL) },
      expect: 404,
      unknownPath: slack("views.update"),
      unknownBody: { view_id: uuid(), view: JSON.stringify(MODAL) },
    }],
  },
  "POST /api/slack/views.publish": {
    surface: "slack",
    scope: null,
    // Only an app's bot publishes a Home, its app's own: any other caller has no Home to set.
    cells: (w) =>
      Promise.resolve([{
        what: "a caller that is no app's bot",
        path: slack("views.publish"),
        body: { user_id: w.users.owner.id, view: JSON.stringify({ type: "home", blocks: [] }) },
        expect: 422,
      }]),
  },
  ...Object.fromEntries(
    ["setStatus", "setSuggestedPrompts", "setTitle"].map((m) => [
      `POST /api/slack/assistant.threads.${m}`,
      {
        surface: "slack",
        scope: "messages:write",
        // Only an agent's bot shows anything in a thread: any other caller is refused.
        cells: (w: World) =>
          Promise.resolve([{
            what: "a caller that is no app's bot",
            path: slack(`assistant.threads.${m}`),
            body: {
              channel_id: w.shared.direct.id,
              thread_ts: w.shared.direct.messageTs,
              status: "working",
              title: "A title",
              prompts: [{ title: "One", message: "one" }],
            },
            expect: 422,
          }]),
      } satisfies SlackRow,
    ]),
  ),
  "POST /api/slack/reactions.remove": {
    surface: "slack",
    scope: "reactions:write",
    cells: slackPerKind(
      "reactions.remove",
      false,
      (f) => ({ channel: f.id, timestamp: f.messageTs, name: "thumbsup" }),
      writes(200),
    ),
  },
};

/** A person's screen session: its cookie and the CSRF token its forms carry. */
interface Session {
  cookie: string;
  csrf: string;
}

async function signIn(w: World, user: User): Promise<Session> {
  const { url } = await createLoginLink(w.s.ctx, user.id);
  const used = await fetch(`${w.s.url}${new URL(url).pathname}`, {
    method: "POST",
    redirect: "manual",
    headers: { Origin: w.s.url },
  });
  await used.body?.cancel();
  const cookie = used.headers.get("set-cookie")!.split(";")[0];
  const page = await (await fetch(`${w.s.url}${S}`, { headers: { Cookie: cookie } })).text();
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page)![1] };
}

const sessions = new Map<Human, Session>();

/** Cells of one screen subject: `ok` for whom it may (the team's admins, or anyone signed in). */
const screen = (
  build: (w: World) => Promise<{ path: string; form?: Record<string, string>; unknown?: string }>,
  expect: (p: Human) => number,
): ScreenRow["cells"] =>
async (w, p) => {
  const { path, form, unknown } = await build(w);
  return [{
    what: "-",
    path,
    body: form,
    expect: p === "anonymous" ? 401 : expect(p),
    unknownPath: unknown,
  }];
};

const teamAdmins = (ok: number) => (p: Human) => p === "owner" || p === "admin" ? ok : 404;
/** The admins of either team reach their own team's page. */
const anyAdmin = (ok: number) => (p: Human) => p === "member" ? 404 : ok;
const everyone = (ok: number) => () => ok;

/** A member of team A made for a cell that changes it. */
const newcomer = (w: World) =>
  createUser(w.s.ctx, { teamId: w.team.id, name: "Newcomer", type: "human", role: "member" }, null);

/** An app installed into team A for a cell that uninstalls it: its id. */
async function installedApp(w: World): Promise<string> {
  const { app } = await registerApp(w.s.ctx);
  await installApp(w.s.ctx, {
    app,
    teamId: w.team.id,
    scopes: app.scopes,
    channelId: null,
    approvedBy: w.users.owner.id,
  });
  return app.id;
}

/**
 * The newest delivery to a subscription of `owner`: the one its ring of records overwrites last,
 * as the matrix's posts go on being delivered (the ring's highest slot may be the next one taken).
 */
async function latestDelivery(w: World, owner: "member" | "botIn"): Promise<string> {
  const [newest] = await recentDeliveries(w.s.ctx.kv, w.subs[owner].id, 1);
  return newest?.id ?? w.subs[owner].deliveryId;
}

/** A bot of team A made for a cell that changes its channels. */
const newBot = (w: World) =>
  createUser(w.s.ctx, { teamId: w.team.id, name: "Helper", type: "bot" }, null);

async function botToken(w: World): Promise<string> {
  return (await createToken(w.s.ctx, w.users.botIn, { scopes: ["channels:read"], actor: null }))
    .token.id;
}

const SCREEN: Record<string, ScreenRow> = {
  "GET /settings/integrations": {
    surface: "screen",
    cells: screen(() => Promise.resolve({ path: S }), everyone(200)),
  },
  "POST /settings/integrations/tokens": {
    surface: "screen",
    cells: screen(
      () => Promise.resolve({ path: `${S}/tokens`, form: { name: "t", scopes: "channels:read" } }),
      everyone(200),
    ),
  },
  "POST /settings/integrations/tokens/{token}/rotate": {
    surface: "screen",
    cells: screen(
      async (w) => ({
        path: `${S}/tokens/${await botToken(w)}/rotate`,
        form: {},
        unknown: `${S}/tokens/${uuid()}/rotate`,
      }),
      teamAdmins(200),
    ),
  },
  "POST /settings/integrations/tokens/{token}/revoke": {
    surface: "screen",
    cells: screen(
      async (w) => ({
        path: `${S}/tokens/${await botToken(w)}/revoke`,
        form: {},
        unknown: `${S}/tokens/${uuid()}/revoke`,
      }),
      teamAdmins(303),
    ),
  },
  "GET /settings/integrations/people": {
    surface: "screen",
    cells: screen(() => Promise.resolve({ path: `${S}/people` }), anyAdmin(200)),
  },
  "POST /settings/integrations/people/{user}/deactivate": {
    surface: "screen",
    cells: screen(
      async (w) => ({
        path: `${S}/people/${(await newcomer(w)).id}/deactivate`,
        form: {},
        unknown: `${S}/people/${uuid()}/deactivate`,
      }),
      teamAdmins(303),
    ),
  },
  "POST /settings/integrations/people/{user}/reactivate": {
    surface: "screen",
    cells: screen(
      async (w) => {
        const gone = await newcomer(w);
        await deactivateUser(w.s.ctx, null, gone.id);
        return {
          path: `${S}/people/${gone.id}/reactivate`,
          form: {},
          unknown: `${S}/people/${uuid()}/reactivate`,
        };
      },
      teamAdmins(303),
    ),
  },
  "POST /settings/integrations/people/{user}/role": {
    surface: "screen",
    cells: screen(
      async (w) => ({
        path: `${S}/people/${(await newcomer(w)).id}/role`,
        form: { role: "admin" },
        unknown: `${S}/people/${uuid()}/role`,
      }),
      // Only owners change roles; an admin is refused, a member doesn't see the page.
      (p) => p === "owner" ? 303 : p === "admin" ? 403 : 404,
    ),
  },
  "GET /settings/integrations/bots": {
    surface: "screen",
    cells: screen(() => Promise.resolve({ path: `${S}/bots` }), anyAdmin(200)),
  },
  "POST /settings/integrations/bots": {
    surface: "screen",
    cells: screen(
      () => Promise.resolve({ path: `${S}/bots`, form: { name: "New Bot" } }),
      anyAdmin(303),
    ),
  },
  "POST /settings/integrations/bots/{bot}/tokens": {
    surface: "screen",
    cells: screen(
      (w) =>
        Promise.resolve({
          path: `${S}/bots/${w.users.botIn.id}/tokens`,
          form: { name: "b", scopes: "channels:read" },
          unknown: `${S}/bots/${uuid()}/tokens`,
        }),
      teamAdmins(200),
    ),
  },
  "POST /settings/integrations/bots/{bot}/channels": {
    surface: "screen",
    cells: screen(
      async (w) => ({
        path: `${S}/bots/${(await newBot(w)).id}/channels`,
        form: { channel: w.shared.public.id },
        unknown: `${S}/bots/${uuid()}/channels`,
      }),
      teamAdmins(303),
    ),
  },
  "POST /settings/integrations/bots/{bot}/channels/{channel}/remove": {
    surface: "screen",
    cells: screen(
      async (w) => {
        const bot = await newBot(w);
        await addMemberAsOperator(w.s.ctx, w.shared.public.id, bot);
        return {
          path: `${S}/bots/${bot.id}/channels/${w.shared.public.id}/remove`,
          form: {},
          unknown: `${S}/bots/${uuid()}/channels/${w.shared.public.id}/remove`,
        };
      },
      teamAdmins(303),
    ),
  },
  "GET /settings/integrations/apps": {
    surface: "screen",
    cells: screen(() => Promise.resolve({ path: `${S}/apps` }), anyAdmin(200)),
  },
  "POST /settings/integrations/apps/{app}/uninstall": {
    surface: "screen",
    cells: screen(
      async (w) => ({
        path: `${S}/apps/${await installedApp(w)}/uninstall`,
        form: {},
        unknown: `${S}/apps/${uuid()}/uninstall`,
      }),
      teamAdmins(303),
    ),
  },
  // Any team's admin or owner installs an app into its own team; a member is told it can't.
  "GET /oauth/authorize": {
    surface: "screen",
    cells: screen(async (w) => {
      const { app } = await registerApp(w.s.ctx);
      return { path: `/oauth/authorize?${authorizeQuery(app, (await pkce()).challenge)}` };
    }, (p) => p === "member" ? 403 : 200),
  },
  "POST /oauth/authorize": {
    surface: "screen",
    cells: screen(async (w) => {
      const { app } = await registerApp(w.s.ctx);
      const query = new URLSearchParams(authorizeQuery(app, (await pkce()).challenge));
      return {
        path: "/oauth/authorize",
        form: { ...Object.fromEntries(query), decision: "approve" },
      };
    }, (p) => p === "member" ? 403 : 303),
  },
  "GET /settings/integrations/webhooks": {
    surface: "screen",
    cells: screen(() => Promise.resolve({ path: `${S}/webhooks` }), anyAdmin(200)),
  },
  "GET /settings/integrations/event-types": {
    surface: "screen",
    cells: screen(() => Promise.resolve({ path: `${S}/event-types` }), anyAdmin(200)),
  },
  "POST /settings/integrations/event-types": {
    surface: "screen",
    cells: screen(
      (w) =>
        Promise.resolve({
          path: `${S}/event-types`,
          form: { subscription: w.subs.botIn.id, event_type: "reaction.added" },
        }),
      teamAdmins(303),
    ),
  },
  "GET /settings/integrations/webhooks/{webhookSubscription}": {
    surface: "screen",
    cells: screen(
      (w) =>
        Promise.resolve({
          path: `${S}/webhooks/${w.subs.member.id}`,
          unknown: `${S}/webhooks/${uuid()}`,
        }),
      teamAdmins(200),
    ),
  },
  "POST /settings/integrations/webhooks/{webhookSubscription}/edit": {
    surface: "screen",
    cells: async (w, p) => [
      // Someone else's (the member's): only its owner retargets it, admins included (403).
      ...await screen(
        (w) =>
          Promise.resolve({
            path: `${S}/webhooks/${w.subs.member.id}/edit`,
            form: { url: w.receiverUrl, events: "message.created" },
            unknown: `${S}/webhooks/${uuid()}/edit`,
          }),
        teamAdmins(403),
      )(w, p),
      // The admin's own.
      ...await screen(
        async (w) => ({
          path: `${S}/webhooks/${await freshSubscription(w, "admin")}/edit`,
          form: { url: w.receiverUrl, events: "message.created" },
        }),
        (p) => p === "admin" ? 303 : p === "owner" ? 403 : 404,
      )(w, p),
    ],
  },
  "POST /settings/integrations/webhooks/{webhookSubscription}/enable": {
    surface: "screen",
    // Active already: the 422 says the policy let the admin through.
    cells: screen(
      (w) =>
        Promise.resolve({
          path: `${S}/webhooks/${w.subs.member.id}/enable`,
          form: {},
          unknown: `${S}/webhooks/${uuid()}/enable`,
        }),
      teamAdmins(422),
    ),
  },
  "POST /settings/integrations/webhooks": {
    surface: "screen",
    cells: screen(
      (w) =>
        Promise.resolve({
          path: `${S}/webhooks`,
          form: { name: "screen-made", url: w.receiverUrl, events: "reaction.added" },
        }),
      anyAdmin(200),
    ),
  },
  "POST /settings/integrations/webhooks/{webhookSubscription}/test": {
    surface: "screen",
    cells: screen(
      (w) =>
        Promise.resolve({
          path: `${S}/webhooks/${w.subs.botIn.id}/test`,
          form: { event_type: "ping" },
          unknown: `${S}/webhooks/${uuid()}/test`,
        }),
      teamAdmins(303),
    ),
  },
  "POST /settings/integrations/webhooks/{webhookSubscription}/signature-scheme": {
    surface: "screen",
    // Someone else's (the bot's): how it is signed is any manager's to choose.
    cells: screen(
      (w) =>
        Promise.resolve({
          path: `${S}/webhooks/${w.subs.botIn.id}/signature-scheme`,
          form: { signature_scheme: "both" },
          unknown: `${S}/webhooks/${uuid()}/signature-scheme`,
        }),
      teamAdmins(303),
    ),
  },
  "POST /settings/integrations/webhooks/{webhookSubscription}/rotate-secret": {
    surface: "screen",
    cells: screen(
      (w) =>
        Promise.resolve({
          path: `${S}/webhooks/${w.subs.botIn.id}/rotate-secret`,
          form: {},
          unknown: `${S}/webhooks/${uuid()}/rotate-secret`,
        }),
      teamAdmins(200),
    ),
  },
  "POST /settings/integrations/webhooks/{webhookSubscription}/deliveries/{delivery}/redeliver": {
    surface: "screen",
    cells: screen(
      async (w) => {
        const delivery = await latestDelivery(w, "member");
        return {
          path: `${S}/webhooks/${w.subs.member.id}/deliveries/${delivery}/redeliver`,
          form: {},
          unknown: `${S}/webhooks/${uuid()}/deliveries/${delivery}/redeliver`,
        };
      },
      teamAdmins(303),
    ),
  },
  "POST /settings/integrations/webhooks/{webhookSubscription}/delete": {
    surface: "screen",
    cells: screen(
      async (w) => ({
        path: `${S}/webhooks/${await freshSubscription(w, "member")}/delete`,
        form: {},
        unknown: `${S}/webhooks/${uuid()}/delete`,
      }),
      teamAdmins(303),
    ),
  },
  "GET /settings/integrations/incoming": {
    surface: "screen",
    cells: screen(() => Promise.resolve({ path: `${S}/incoming` }), anyAdmin(200)),
  },
  "POST /settings/integrations/incoming": {
    surface: "screen",
    cells: async (w, p) => [
      ...await screen(
        (w) =>
          Promise.resolve({
            path: `${S}/incoming`,
            form: { target: `${w.shared.public.id}:${w.users.botIn.id}`, name: "ci" },
          }),
        teamAdmins(200),
      )(w, p),
      // The admin is not in the private channel: it can't point a hook there.
      ...await screen(
        (w) =>
          Promise.resolve({
            path: `${S}/incoming`,
            form: { target: `${w.shared.private.id}:${w.users.botIn.id}`, name: "ci" },
          }),
        (p) => p === "owner" ? 200 : 404,
      )(w, p),
    ],
  },
  "POST /settings/integrations/incoming/{incomingWebhook}/rotate-verify-secret": {
    surface: "screen",
    cells: screen(
      async (w) => ({
        path: `${S}/incoming/${
          (await createIncoming(
            w.s.ctx,
            { channelId: w.shared.public.id, botId: w.users.botIn.id, verify: "github" },
            null,
          )).hook.id
        }/rotate-verify-secret`,
        form: {},
        unknown: `${S}/incoming/${uuid()}/rotate-verify-secret`,
      }),
      teamAdmins(200),
    ),
  },
  "POST /settings/integrations/incoming/{incomingWebhook}/revoke": {
    surface: "screen",
    cells: screen(
      async (w) => ({
        path: `${S}/incoming/${
          (await createIncoming(
            w.s.ctx,
            { channelId: w.shared.public.id, botId: w.users.botIn.id },
            null,
          )).hook.id
        }/revoke`,
        form: {},
        unknown: `${S}/incoming/${uuid()}/revoke`,
      }),
      teamAdmins(303),
    ),
  },
  "GET /settings/integrations/audit": {
    surface: "screen",
    cells: screen(() => Promise.resolve({ path: `${S}/audit` }), anyAdmin(200)),
  },
  "POST /settings/sign-out": {
    surface: "screen",
    // Signing out ends the session: a session of its own for the cell.
    cells: async (w, p) => {
      if (p === "anonymous") {
        return [{ what: "-", path: "/settings/sign-out", body: {}, expect: 401 }];
      }
      const own = await signIn(w, w.users[p]);
      return [{
        what: "own session",
        path: "/settings/sign-out",
        body: { _session: own },
        expect: 200,
      }];
    },
  },
};

const OPEN: Record<string, OpenRow> = {
  "POST /responses/{secret}": {
    surface: "open",
    cells: async (w) => {
      const { response_url: url } = await issueAnswerWays(w.s.ctx, {
        app: w.app,
        teamId: w.team.id,
        channelId: w.shared.public.id,
        userId: w.users.member.id,
        botId: w.appBot,
        messageId: null,
      });
      const body = { text: "later" };
      return [
        { what: "a live response_url", path: new URL(url).pathname, body, expect: 200 },
        {
          what: "an unknown one",
          path: `/responses/${"r".repeat(40)}`,
          body,
          expect: 404,
        },
      ];
    },
  },
  // Only an app-level token opens a connection; none of the subjects here holds one.
  "POST /api/slack/apps.connections.open": {
    surface: "open",
    cells: () =>
      Promise.resolve([{
        what: "no app-level token",
        path: "/api/slack/apps.connections.open",
        body: {},
        expect: 200,
        check: (body) => assert.equal((body as { ok: boolean }).ok, false),
      }]),
  },
  "GET /": {
    surface: "open",
    cells: () => Promise.resolve([{ what: "-", path: "/", expect: 200 }]),
  },
  "GET /up": {
    surface: "open",
    cells: () => Promise.resolve([{ what: "-", path: "/up", expect: 200 }]),
  },
  "GET /metrics": {
    surface: "open",
    cells: () => Promise.resolve([{ what: "no METRICS_TOKEN set", path: "/metrics", expect: 404 }]),
  },
  "GET /api/v1/openapi.yaml": {
    surface: "open",
    cells: () => Promise.resolve([{ what: "-", path: "/api/v1/openapi.yaml", expect: 200 }]),
  },
  "GET /api/v1/docs": {
    surface: "open",
    cells: () => Promise.resolve([{ what: "-", path: "/api/v1/docs", expect: 200 }]),
  },
  "GET /api/v1/docs/{file}": {
    surface: "open",
    cells: () =>
      Promise.resolve([
        { what: "redoc", path: "/api/v1/docs/redoc-3.0.1.standalone.js", expect: 200 },
        { what: "unknown", path: "/api/v1/docs/evil.js", expect: 404 },
      ]),
  },
  "GET /settings/assets/{file}": {
    surface: "open",
    cells: () =>
      Promise.resolve([
        { what: "css", path: "/settings/assets/app.css", expect: 200 },
        { what: "unknown", path: "/settings/assets/evil.js", expect: 404 },
      ]),
  },
  "GET /settings/login/{secret}": {
    surface: "open",
    cells: async (w) => {
      const { url } = await createLoginLink(w.s.ctx, w.users.member.id);
      return [
        { what: "a live link", path: new URL(url).pathname, expect: 200 },
        { what: "an unknown link", path: `/settings/login/${"x".repeat(40)}`, expect: 404 },
      ];
    },
  },
  "POST /settings/login/{secret}": {
    surface: "open",
    cells: async (w) => {
      const { url } = await createLoginLink(w.s.ctx, w.users.member.id);
      const path = new URL(url).pathname;
      return [
        { what: "a live link", path, body: {}, expect: 303 },
        { what: "the same link again", path, body: {}, expect: 410 },
        {
          what: "an unknown link",
          path: `/settings/login/${"y".repeat(40)}`,
          body: {},
          expect: 404,
        },
      ];
    },
  },
  "GET /.well-known/oauth-authorization-server": {
    surface: "open",
    cells: () =>
      Promise.resolve([{
        what: "-",
        path: "/.well-known/oauth-authorization-server",
        expect: 200,
      }]),
  },
  "POST /oauth/token": {
    surface: "open",
    cells: async (w) => {
      const { app } = await registerApp(w.s.ctx);
      const form = { grant_type: "authorization_code", code: "x", code_verifier: "v" };
      return [
        { what: "no client", path: "/oauth/token", body: form, expect: 401 },
        {
          what: "a wrong secret",
          path: "/oauth/token",
          body: { ...form, client_id: app.client_id, client_secret: "tcs_wrong" },
          expect: 401,
        },
      ];
    },
  },
  "POST /oauth/revoke": {
    surface: "open",
    cells: async (w) => {
      const { app, secret } = await registerApp(w.s.ctx);
      return [
        { what: "no client", path: "/oauth/revoke", body: { token: "x" }, expect: 401 },
        {
          what: "the app itself",
          path: "/oauth/revoke",
          body: { token: "x", client_id: app.client_id, client_secret: secret },
          expect: 200,
        },
      ];
    },
  },
  "POST /admin/v1/{command}": {
    surface: "open",
    // Signed requests are tests/cli_remote_test.ts's: no token, session or client opens it.
    cells: () =>
      Promise.resolve([
        {
          what: "unsigned",
          path: "/admin/v1/team:list",
          body: { flags: {} },
          expect: 401,
        },
      ]),
  },
  "POST /hooks/{secret}": {
    surface: "open",
    cells: async (w) => {
      const make = async (channel: string) =>
        await createIncoming(w.s.ctx, { channelId: channel, botId: w.users.botIn.id }, null);
      const live = await make(w.shared.public.id);
      const revoked = await make(w.shared.public.id);
      await revokeIncomingById(w.s.ctx, revoked.hook.id, null);
      const archivedFix = await channelOf(w, "public");
      const archived = await make(archivedFix.id);
      await archiveChannel(w.s.ctx, w.subjects.owner, archivedFix.id);
      const leftFix = await channelOf(w, "public");
      const left = await make(leftFix.id);
      await w.s.ctx.kv.delete(keys.member(leftFix.id, w.users.botIn.id));
      const path = (url: string) => new URL(url).pathname;
      const body = { text: "through a hook" };
      return [
        { what: "a live hook", path: path(live.url), body, expect: 200 },
        {
          what: "a revoked hook",
          path: path(revoked.url),
          body,
          expect: 404,
          unknownPath: `/hooks/${"z".repeat(40)}`,
        },
        // Answered as Slack's hooks answer a client that doesn't ask for JSON.
        { what: "an archived channel", path: path(archived.url), body, expect: 410 },
        { what: "its bot left the channel", path: path(left.url), body, expect: 403 },
      ];
    },
  },
};

const ROWS: Record<string, Row> = { ...API, ...SCREEN, ...OPEN, ...SLACK };

/** Every operation openapi.yaml describes, as "METHOD /full/path". */
function documentedOperations(): string[] {
  const { doc, templates } = openApi();
  return templates.flatMap((t) =>
    ["get", "put", "post", "delete", "patch"].filter((m) => t.item[m]).map((m) =>
      `${m.toUpperCase()} /${t.segments.join("/")}`.replace("//", "/")
    )
  ).filter(() => doc);
}

/** Ids and the CSRF token out of the way, so two 404s compare by what they say. */
const normalized = (text: string) =>
  text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<id>")
    .replace(/value="[0-9A-Za-z]{40}"/g, 'value="<csrf>"');

interface Answer {
  status: number;
  text: string;
}

async function call(
  w: World,
  surface: Row["surface"],
  subject: ApiSubject | ScreenSubject | null,
  method: string,
  path: string,
  body: unknown,
): Promise<Answer> {
  const headers = new Headers();
  let payload: string | undefined;
  if ((surface === "api" || surface === "slack") && subject) {
    headers.set("Authorization", `Bearer ${w.tokens[subject as ApiSubject]}`);
  }
  if (surface === "screen") {
    const form = (body ?? {}) as Record<string, unknown>;
    const session = (form._session as Session | undefined) ??
      (subject === "anonymous" ? null : sessions.get(subject as Human)!);
    if (session) headers.set("Cookie", session.cookie);
    if (method === "POST") {
      headers.set("Origin", w.s.url);
      headers.set("Content-Type", "application/x-www-form-urlencoded");
      const fields = Object.entries(form).filter(([k]) => k !== "_session") as [string, string][];
      payload = new URLSearchParams([...fields, ["_csrf", session?.csrf ?? ""]]).toString();
    }
  } else if (body !== undefined) {
    headers.set("Content-Type", "application/json");
    if (surface === "open" && path.startsWith("/settings/")) {
      headers.set("Origin", w.s.url);
      headers.set("Content-Type", "application/x-www-form-urlencoded");
      payload = "";
    } else if (surface === "open" && path.startsWith("/oauth/")) {
      headers.set("Content-Type", "application/x-www-form-urlencoded");
      payload = new URLSearchParams(body as Record<string, string>).toString();
    } else {
      payload = JSON.stringify(body);
    }
  }
  const res = await fetch(`${w.s.url}${path}`, {
    method,
    headers,
    body: payload,
    redirect: "manual",
  });
  const type = res.headers.get("content-type") ?? "";
  if (type.startsWith("text/event-stream")) {
    // A stream lasts until the client goes: its first bytes show it opened.
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    checkResponse(method, path, res.status, null);
    return { status: res.status, text: first };
  }
  const text = await res.text();
  const json = type.includes("json") ? JSON.parse(text) : null;
  checkResponse(method, path, res.status, json);
  if (surface === "slack" && res.status === 200) {
    return { status: json.ok ? 200 : SLACK_STATUS[json.error] ?? 422, text };
  }
  return { status: res.status, text };
}

/** An app whose slash command the receiver answers, installed in `team` by the operator. */
async function commandApp(ctx: Ctx, team: Team, url: string) {
  const command = "/matrix";
  const manifest = {
    display_information: { name: "Matrix App" },
    features: {
      slash_commands: [{ command, url, description: "Answers" }],
      app_home: { home_tab_enabled: true },
      assistant_view: { assistant_description: "Answers" },
      shortcuts: [
        { name: "Global", type: "global", callback_id: "mx", description: "Runs" },
        { name: "On a message", type: "message", callback_id: "mxm", description: "Runs" },
      ],
    },
    oauth_config: { scopes: { bot: ["commands", "chat:write"] } },
    settings: { interactivity: { is_enabled: true, request_url: url } },
  };
  const { app } = await createAppFromManifest(ctx, JSON.stringify(manifest), null);
  const { install } = await installApp(ctx, {
    app,
    teamId: team.id,
    scopes: ["commands", "messages:write"],
    channelId: null,
    approvedBy: null,
  });
  return { app, appBot: install.bot_user_id, command };
}

async function buildWorld(s: TestServer, receiverUrl: string): Promise<World> {
  const { ctx } = s;
  const team = await createTeam(ctx, "Matrix");
  const other = await createTeam(ctx, "Elsewhere");
  const human = (t: Team, name: string, role: "owner" | "admin" | "member") =>
    createUser(ctx, { teamId: t.id, name, type: "human", role }, null);
  const bot = (name: string) => createUser(ctx, { teamId: team.id, name, type: "bot" }, null);
  const users: Record<Person, User> = {
    owner: await human(team, "Olga Owner", "owner"),
    admin: await human(team, "Ada Admin", "admin"),
    // A demoted admin: made an admin, demoted below once the service has its token in memory.
    member: await human(team, "Mo Member", "admin"),
    botIn: await bot("Bot In"),
    botOut: await bot("Bot Out"),
    foreign: await human(other, "Fay Foreign", "owner"),
  };
  const tokens = {} as Record<ApiSubject, string>;
  for (const p of PEOPLE) {
    tokens[p] = (await createToken(ctx, users[p], { scopes: [...SCOPES], actor: null })).value;
  }
  for (const scope of SCOPES) {
    tokens[`only:${scope}`] =
      (await createToken(ctx, users.owner, { scopes: [scope], actor: null })).value;
  }
  const revoked = await createToken(ctx, users.owner, { scopes: [...SCOPES], actor: null });
  await revokeTokenById(ctx, revoked.token.id, null);
  tokens.revoked = revoked.value;
  const expired = await createToken(ctx, users.owner, {
    scopes: [...SCOPES],
    expiresInSeconds: 1,
    actor: null,
  });
  tokens.expired = expired.value;
  // People who left: their tokens end with them.
  const leaver = await human(team, "Lee Leaver", "member");
  const leftBot = await bot("Left Bot");
  for (const [subject, user] of [["deactivated", leaver], ["deactivatedBot", leftBot]] as const) {
    tokens[subject] = (await createToken(ctx, user, { scopes: [...SCOPES], actor: null })).value;
    await deactivateUser(ctx, null, user.id);
  }
  // The service learns the member's token while it is an admin's, then the role changes: every
  // cell of "member" checks that a demoted admin has a member's rights, and no more.
  const seen = await fetch(`${s.url}/api/v1/channels`, {
    headers: { Authorization: `Bearer ${tokens.member}` },
  });
  await seen.body?.cancel();
  users.member = (await changeRole(ctx, null, users.member.id, "member")).user;
  const subjects = {} as Record<Person, Subject>;
  for (const p of PEOPLE) subjects[p] = await authenticate(ctx, tokens[p]);
  const w: World = {
    s,
    team,
    users,
    subjects,
    tokens,
    joiner: await bot("Joiner"),
    removee: await human(team, "Rita Removee", "member"),
    shared: {} as Record<Kind, ChannelFixture>,
    subs: {} as World["subs"],
    receiverUrl,
    ...await commandApp(ctx, team, receiverUrl),
  };
  const subscribe = async (owner: "member" | "botIn") => {
    const res = await fetch(`${s.url}/api/v1/webhooks`, {
      method: "POST",
      headers: { Authorization: `Bearer ${tokens[owner]}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: `${owner}'s`, url: receiverUrl, events: ["message.created"] }),
    });
    return (await res.json()).data.id as string;
  };
  const subIds = { member: await subscribe("member"), botIn: await subscribe("botIn") };
  for (const k of KINDS) w.shared[k] = await channelOf(w, k);
  for (const owner of ["member", "botIn"] as const) {
    let deliveryId = "";
    await waitUntil(
      async () => {
        const list = await s.ctx.kv.list<{ id: string }>({
          prefix: keys.deliverySlots(subIds[owner]),
        })
          .next();
        deliveryId = list.value?.value.id ?? "";
        return deliveryId !== "";
      },
      10_000,
      `a delivery to ${owner}'s subscription`,
    );
    w.subs[owner] = { id: subIds[owner], deliveryId };
  }
  return w;
}

Deno.test("authorization matrix: every operation × every subject, as decisions.md says", async () => {
  const documented = documentedOperations();
  const missing = documented.filter((op) => !(op in ROWS));
  assert.deepEqual(missing, [], "every operation in openapi.yaml has a row in the matrix");
  assert.deepEqual(Object.keys(ROWS).filter((op) => !documented.includes(op)), [], "no stale rows");

  const r = receiver();
  const s = await startServer({}, { engine: true });
  let cells = 0;
  let compared = 0;
  const wrong: string[] = [];
  try {
    const w = await buildWorld(s, r.url);
    for (const h of HUMANS) sessions.set(h, await signIn(w, w.users[h]));
    // The feed holds back its last 5 seconds, and the expired token needs its second.
    await new Promise((done) => setTimeout(done, 5_200));

    const run = async (
      op: string,
      row: Row,
      subject: ApiSubject | ScreenSubject | null,
      cell: Omit<Cell, "method">,
    ) => {
      const method = op.split(" ")[0];
      const got = await call(w, row.surface, subject, method, cell.path, cell.body);
      cells++;
      const where = `${op} as ${subject ?? "anyone"} on ${cell.what}`;
      if (got.status !== cell.expect) {
        wrong.push(`${where}: ${got.status}, expected ${cell.expect}: ${got.text.slice(0, 160)}`);
        return;
      }
      if (got.status === 200 && cell.check) {
        try {
          cell.check(JSON.parse(got.text));
        } catch (e) {
          wrong.push(`${where}: ${(e as Error).message}`);
        }
      }
      if (got.status === (cell.hidden ?? 404) && cell.unknownPath) {
        const unknownBody = cell.unknownBody ?? cell.body;
        const unknown = await call(w, row.surface, subject, method, cell.unknownPath, unknownBody);
        compared++;
        if (unknown.status !== got.status || normalized(unknown.text) !== normalized(got.text)) {
          wrong.push(`${where}: hidden and unknown differ: ${got.text} / ${unknown.text}`);
        }
      }
    };

    for (const [op, row] of Object.entries(ROWS)) {
      if (row.surface === "api" || row.surface === "slack") {
        for (const subject of API_SUBJECTS) {
          const as: Person = subject.startsWith("only:") || ended(subject)
            ? "owner"
            : subject as Person;
          for (const cell of await row.cells(w, as)) {
            if (ended(subject)) cell.expect = 401;
            else if (
              subject.startsWith("only:") && row.scope && subject !== `only:${row.scope}`
            ) {
              cell.expect = 403;
            }
            if (cell.expect !== 200) delete cell.check;
            await run(op, row, subject, cell);
          }
        }
      } else if (row.surface === "screen") {
        for (const subject of SCREEN_SUBJECTS) {
          for (const cell of await row.cells(w, subject)) await run(op, row, subject, cell);
        }
      } else {
        for (const cell of await row.cells(w)) await run(op, row, null, cell);
      }
    }
  } finally {
    await s.close();
    await r.close();
  }
  console.log(
    `authorization matrix: ${Object.keys(ROWS).length} operations, ${cells} cells checked, ` +
      `${compared} hidden answers compared with unknown ones`,
  );
  assert.deepEqual(wrong, [], `${wrong.length} of ${cells} cells answered otherwise`);
});
