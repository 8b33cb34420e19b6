/**
 * A workspace holding one of everything a route can name (a channel, a message with buttons and a
 * poll, an app with a command and shortcuts, its open modal and ephemeral message, a subscription
 * with a delivery, an incoming webhook, sign-in links, a screen session), for tests that throw
 * hostile input at every route: each path parameter gets a real record, so what follows the
 * lookup is reached too. The app's blocks carry `Object.prototype`'s names as their ids, and its
 * request URL answers with them.
 */
import { type ServedRoutes, startServer, type TestServer, workspace } from "./harness.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { issueAnswerWays } from "../domain/apps/responses.ts";
import { createLoginLink } from "../domain/people/sessions.ts";
import { createAppToken } from "../domain/apps/socket/app_tokens.ts";
import { createToken } from "../domain/people/tokens.ts";
import { showEphemeral } from "../domain/messages/ephemeral.ts";
import { createUser } from "../domain/people/workspace.ts";
import { recentDeliveries } from "../kv/outbox/deliveries.ts";
import { type Receiver, receiver, waitUntil } from "./webhook_receivers.ts";
import { SCOPES } from "../core/types.ts";
import { own } from "../core/tables.ts";

/** The names every plain object inherits, and a few of `Object`'s own, as ids and field names. */
export const PROTOTYPE_NAMES = [
  ...Object.getOwnPropertyNames(Object.prototype),
  "keys",
  "assign",
  "prototype",
];

/** Control characters, a line break, a lone surrogate and a Unicode line separator. */
export const CONTROL_TEXTS = ["\x00", "\x01", "a\x1fb", "\x7f", "\r\n", "\ud800", "\u2028"];

export const HOSTILE = [...PROTOTYPE_NAMES, ...CONTROL_TEXTS];

const plain = (text: string) => ({ type: "plain_text", text });

/** An actions block per prototype name: the block and its button both named by it. */
export const hostileActions = () =>
  PROTOTYPE_NAMES.map((name, i) => ({
    type: "actions",
    block_id: name,
    elements: [{
      type: "button",
      action_id: PROTOTYPE_NAMES[(i + 1) % PROTOTYPE_NAMES.length],
      text: plain("Press"),
      value: name,
    }],
  }));

/** A modal whose inputs are named by the prototype's names, block and action alike. */
export const hostileModal = () => ({
  type: "modal",
  callback_id: "constructor",
  title: plain("Hostile"),
  submit: plain("Send"),
  blocks: [
    ...PROTOTYPE_NAMES.map((name, i) => ({
      type: "input",
      block_id: name,
      optional: true,
      label: plain(name),
      element: {
        type: "plain_text_input",
        action_id: PROTOTYPE_NAMES[(i + 1) % PROTOTYPE_NAMES.length],
      },
    })),
    ...hostileActions().slice(0, 3).map((b) => ({ ...b, block_id: `${b.block_id}-acts` })),
  ],
});

/**
 * What the app answers, by request: nothing, errors keyed by the prototype's names, messages with
 * blocks named by them, fields named by them.
 */
const appAnswers = (): unknown[] => [
  "",
  { response_action: "errors", errors: Object.fromEntries(PROTOTYPE_NAMES.map((n) => [n, n])) },
  { text: "answer", blocks: hostileActions().slice(0, 4) },
  Object.fromEntries(HOSTILE.map((n) => [n, n])),
  { response_action: "update", view: hostileModal() },
  { options: PROTOTYPE_NAMES.map((n) => ({ text: plain(n), value: n })) },
];

export interface HostileWorld {
  s: TestServer & { routes: ServedRoutes };
  app: Receiver;
  /**
   * Bearer tokens: the admin's (every scope), the app's bot's, and the app-level one of a second
   * app, in Socket Mode.
   */
  tokens: { admin: string; appBot: string; appLevel: string };
  /** A signed-in admin's screen session. */
  session: { cookie: string; csrf: string };
  /** A real value for each path parameter, by the path before it and the parameter's name. */
  param(path: string, name: string): string;
  /** A real value for a body field or query parameter of this name, where the world has one. */
  field(name: string): string | undefined;
  close(): Promise<void>;
}

/** The world, on a fresh server with its delivery engine. */
export async function hostileWorld(): Promise<HostileWorld> {
  // Each request comes from an address of its own (X-Forwarded-For), so that the guessing guard
  // of one route's hostile secrets does not answer 429 to the next route's real one.
  const s = await startServer({ WEBHOOKS_BACKOFF: "100ms", TRUST_PROXY: "true" }, { engine: true });
  const answers = appAnswers();
  const app = receiver((n) => {
    const answer = answers[n % answers.length];
    return answer === "" ? new Response("") : Response.json(answer);
  });
  try {
    return await fill(s, app);
  } catch (e) {
    await app.close();
    await s.close();
    throw e;
  }
}

async function fill(
  s: TestServer & { routes: ServedRoutes },
  app: Receiver,
): Promise<HostileWorld> {
  const { ctx } = s;
  const w = await workspace(ctx);
  const general = w.team.general_channel_id;
  const made = await createAppFromManifest(
    ctx,
    JSON.stringify({
      display_information: { name: "Hostile" },
      features: {
        slash_commands: [{ command: "/constructor", url: app.url, description: "Hostile" }],
        shortcuts: [
          { name: "G", type: "global", callback_id: "constructor", description: "g" },
          { name: "M", type: "message", callback_id: "__proto__", description: "m" },
        ],
      },
      oauth_config: { scopes: { bot: ["chat:write", "commands", "channels:history"] } },
      settings: {
        interactivity: {
          is_enabled: true,
          request_url: app.url,
          message_menu_options_url: app.url,
        },
        event_subscriptions: { request_url: app.url, bot_events: ["message.channels"] },
      },
    }),
    null,
  );
  const installed = await installApp(ctx, {
    app: made.app,
    teamId: w.team.id,
    scopes: [...SCOPES],
    channelId: general,
    approvedBy: null,
  });
  const appBot = installed.token.value;
  const appBotId = installed.install.bot_user_id;
  const slack = (method: string, body: unknown) =>
    fetch(`${s.url}/api/slack/${method}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${appBot}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }).then((r) => r.json());
  const posted = await slack("chat.postMessage", {
    channel: general,
    text: "Press",
    blocks: [
      ...hostileActions(),
      {
        type: "section",
        block_id: "menu",
        text: { type: "mrkdwn", text: "Pick" },
        accessory: { type: "external_select", action_id: "valueOf", placeholder: plain("Pick") },
      },
    ],
  });
  const message = await findMessage(s, w.admin.token, general, posted.ts);
  const poll = await api(s, w.admin.token, "POST", `/api/v1/channels/${general}/messages`, {
    body: "Which?",
    poll: { options: ["constructor", "__proto__"] },
  });
  const ways = await issueAnswerWays(ctx, {
    app: made.app,
    teamId: w.team.id,
    channelId: general,
    userId: w.admin.user.id,
    botId: appBotId,
    messageId: message,
  });
  const view = await slack("views.open", { trigger_id: ways.trigger_id, view: hostileModal() });
  if (!view.ok || !posted.ok) {
    throw new Error(`the app's view or message: ${JSON.stringify([view, posted])}`);
  }
  const ephemeral = await showEphemeral(ctx, {
    userId: w.admin.user.id,
    teamId: w.team.id,
    ephemeral: {
      channel_id: general,
      text: "Press",
      blocks: hostileActions().slice(0, 3),
      app_id: made.app.id,
    },
    from: { appId: made.app.id, botId: appBotId },
  });
  const subscription = await api(s, w.admin.token, "POST", "/api/v1/webhooks", {
    name: "hostile",
    url: app.url,
    events: ["message.created"],
  });
  await api(s, w.admin.token, "POST", `/api/v1/webhooks/${subscription.data.id}/test`, {});
  let delivery = "";
  await waitUntil(
    async () => {
      delivery = (await recentDeliveries(ctx.kv, subscription.data.id, 1))[0]?.id ?? "";
      return delivery !== "";
    },
    10_000,
    "the subscription's first delivery",
  );
  const incoming = installed.incoming!;
  const spare = await createUser(ctx, {
    teamId: w.team.id,
    name: "Spare",
    type: "human",
    role: "member",
  }, null);
  const spareToken = await createToken(ctx, w.member.user, {
    scopes: ["channels:read"],
    actor: null,
  });
  const socketApp = await createAppFromManifest(
    ctx,
    JSON.stringify({
      display_information: { name: "Hostile socket" },
      oauth_config: { scopes: { bot: ["chat:write", "channels:history"] } },
      settings: {
        socket_mode_enabled: true,
        interactivity: { is_enabled: true },
        event_subscriptions: { bot_events: ["message.channels"] },
      },
    }),
    null,
  );
  await installApp(ctx, {
    app: socketApp.app,
    teamId: w.team.id,
    scopes: [...SCOPES],
    channelId: null,
    approvedBy: null,
  });
  const appLevel = await createAppToken(ctx, { appId: socketApp.app.id, name: null, actor: null });
  const session = await signIn(s, w.admin.user.id);
  const responseSecret = new URL(ways.response_url).pathname.split("/").at(-1)!;
  const loginSecret = async () =>
    new URL((await createLoginLink(ctx, spare.id)).url).pathname.split("/").at(-1)!;
  const idsAfter: Record<string, string> = {
    channels: general,
    messages: message,
    users: spare.id,
    reactions: "thumbsup",
    votes: poll.data.poll.options[0].id,
    webhooks: subscription.data.id,
    deliveries: delivery,
    apps: made.app.id,
    shortcuts: "constructor",
    views: view.view.id,
    ephemeral: ephemeral.id!,
    hooks: new URL(incoming.url).pathname.split("/").at(-1)!,
    responses: responseSecret,
    bots: w.bot.user.id,
    tokens: spareToken.token.id,
    people: spare.id,
    incoming: incoming.id,
    login: await loginSecret(),
    docs: "redoc.standalone.js",
    assets: "app.css",
  };
  const fields: Record<string, string> = {
    channel: general,
    channel_id: general,
    user: spare.id,
    user_id: spare.id,
    users: spare.id,
    ts: posted.ts,
    message_ts: posted.ts,
    thread_ts: posted.ts,
    message_id: message,
    view_id: idsAfter.views,
    trigger_id: ways.trigger_id,
    email: "spare@example.com",
    name: "hostile",
    url: app.url,
    command: "/constructor",
    emoji: "thumbsup",
    option_id: idsAfter.votes,
    _csrf: session.csrf,
    client_id: made.app.client_id,
    client_secret: made.clientSecret,
  };
  return {
    s,
    app,
    tokens: { admin: w.admin.token, appBot, appLevel: appLevel.token },
    session,
    param: (path, name) => own(idsAfter, path.split("/").filter(Boolean).at(-1) ?? "") ?? name,
    field: (name) => own(fields, name),
    async close() {
      await app.close();
      await s.close();
    },
  };
}

async function api(s: TestServer, token: string, method: string, path: string, body: unknown) {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function findMessage(s: TestServer, token: string, channel: string, ts: string) {
  const res = await fetch(`${s.url}/api/v1/channels/${channel}/messages`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  const { data } = await res.json();
  return data.find((m: { ts: string }) => m.ts === ts).id as string;
}

async function signIn(s: TestServer, userId: string) {
  const { url } = await createLoginLink(s.ctx, userId);
  const used = await fetch(`${s.url}${new URL(url).pathname}`, {
    method: "POST",
    redirect: "manual",
    headers: { Origin: s.url },
  });
  await used.body?.cancel();
  const cookie = used.headers.get("set-cookie")!.split(";")[0];
  const page =
    await (await fetch(`${s.url}/settings/integrations`, { headers: { Cookie: cookie } }))
      .text();
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page)![1] };
}
