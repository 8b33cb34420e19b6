/**
 * Slack's Web API, the subset apps call (decisions.md, "The Slack Web API subset"), at
 * `/api/slack/<method>`: a form or JSON body (or the query), the token as `Authorization: Bearer`
 * or a `token` field, HTTP 200 with `{ ok: true, ... }` or `{ ok: false, error }` in Slack's
 * codes, 429 with `Retry-After`. Each method calls the domain functions the REST API calls, so
 * one policy, the scopes, the rate limit and the audit decide for both.
 */
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Ctx } from "../../domain/context.ts";
import type { Subject } from "../../core/types.ts";
import type { Method, Params } from "./method.ts";
import { ApiError, Unauthenticated } from "../../core/errors.ts";
import { authenticate } from "../../domain/people/authenticate.ts";
import type { RateLimiter } from "../../domain/guards/rate_limit.ts";
import { applyRateLimit } from "../middleware/rate_limit.ts";
import { httpErrorOf } from "../errors.ts";
import { MAX_BODY_BYTES, readText } from "../body.ts";
import type { ObservedVars } from "../middleware/observe.ts";
import { chatMethods } from "./chat.ts";
import { conversationMethods } from "./conversations.ts";
import { channelAdminMethods } from "./channel_admin.ts";
import { peopleMethods } from "./people.ts";
import { viewMethods } from "./views.ts";
import { teamMethods } from "./team.ts";
import { scheduledMethods } from "./scheduled.ts";
import { assistantMethods } from "./assistant.ts";
import { streamMethods } from "./streams.ts";
import { slackCodeOf, SlackError } from "./errors.ts";
import { SLACK_SCOPE_FOR, slackScopesGranted } from "../../domain/apps/slack_scopes.ts";
import { channelIdOf } from "../../domain/channels/channel_names.ts";
import { CONNECTIONS_OPEN, isAppToken, openConnection } from "./connections.ts";

/** A Map, not an object: a request names the method, and `constructor` is no method of ours. */
const METHODS = new Map<string, Method>(Object.entries({
  ...chatMethods,
  ...conversationMethods,
  ...channelAdminMethods,
  ...peopleMethods,
  ...viewMethods,
  ...teamMethods,
  ...scheduledMethods,
  ...assistantMethods,
  ...streamMethods,
}));

/** Slack's Web API methods this service answers, for the docs and the reference. */
export const SLACK_METHODS = [...METHODS.keys(), CONNECTIONS_OPEN].sort();

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The parameters of a call: the query's, then the form's or JSON body's over them. */
async function paramsOf(c: Context): Promise<Params> {
  const params: Params = { ...c.req.query() };
  if (c.req.method !== "POST") return params;
  const type = c.req.header("Content-Type") ?? "";
  const text = await readText(c);
  if (!text) return params;
  if (type.startsWith("application/json")) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new SlackError("invalid_json");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new SlackError("invalid_json");
    }
    return { ...params, ...body };
  }
  return { ...params, ...Object.fromEntries(new URLSearchParams(text)) };
}

const json = (c: Context, body: Record<string, unknown>, status: 200 | 429 = 200) =>
  c.json(body, status);

/** Who calls: the bearer token, or the `token` field; Slack's codes for each refusal. */
async function caller(ctx: Ctx, c: Context, params: Params): Promise<Subject> {
  const header = BEARER.exec(c.req.header("Authorization") ?? "")?.[1];
  const token = header ?? (typeof params.token === "string" ? params.token : undefined);
  if (isAppToken(token)) throw new SlackError("not_allowed_token_type");
  try {
    return await authenticate(ctx, token);
  } catch (e) {
    if (!(e instanceof Unauthenticated)) throw e;
    throw new SlackError(
      {
        missing: "not_authed",
        invalid: "invalid_auth",
        revoked: "token_revoked",
        expired: "token_expired",
        inactive: "account_inactive",
      }[e.reason],
    );
  }
}

/** `/api/slack/<method>`, answered as Slack answers. */
export function slackWebApi(ctx: Ctx, limiter: RateLimiter) {
  const app = new Hono<{ Variables: ObservedVars }>();
  app.onError((e, c) => answerError(e, c));
  app.use(bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => json(c, { ok: false, error: "request_too_large" }),
  }));
  app.on(["GET", "POST"], "/:method", async (c) => {
    const name = c.req.param("method");
    if (name === CONNECTIONS_OPEN) return await connectionsOpen(c);
    const method = METHODS.get(name);
    if (!method) return json(c, { ok: false, error: "unknown_method" });
    const params = await paramsOf(c);
    const subject = await caller(ctx, c, params);
    c.set("credential", { token_id: subject.token_id });
    await applyRateLimit(c, limiter, `token:${subject.token_id}`);
    if (method.scope && !subject.scopes.includes(method.scope)) {
      // Named as the Slack developer asks for it, both sides; the service's own scope beside.
      return json(c, {
        ok: false,
        error: "missing_scope",
        needed: method.slackScope ?? SLACK_SCOPE_FOR[method.scope],
        provided: slackScopesGranted(subject.scopes).join(","),
        response_metadata: { scopes: [method.scope] },
      });
    }
    try {
      // Slack takes `#name` wherever it takes a channel's id.
      if (typeof params.channel === "string") {
        params.channel = await channelIdOf(ctx, subject, params.channel);
      }
      return json(c, { ok: true, ...await method.run({ ctx, subject, params }) });
    } catch (e) {
      throw e instanceof ApiError ? new SlackError(slackCodeOf(name, e), e) : e;
    }
  });
  /** An app-level token's call: the bearer header only; a token in the body is not one. */
  async function connectionsOpen(c: Context) {
    const params = await paramsOf(c);
    const { url, tokenId } = await openConnection(ctx, {
      header: BEARER.exec(c.req.header("Authorization") ?? "")?.[1],
      inBody: typeof params.token === "string",
      reached: c.req.url,
    });
    await applyRateLimit(c, limiter, `app-token:${tokenId}`);
    return json(c, { ok: true, url });
  }
  return app;
}

/** Every refusal as Slack words it: 200 with `ok: false`, or 429 with `Retry-After`. */
function answerError(thrown: Error, c: Context): Response {
  const err = httpErrorOf(thrown);
  if (err instanceof ApiError && err.status === 429) {
    for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
    return json(c, { ok: false, error: "ratelimited" }, 429);
  }
  if (err instanceof SlackError) {
    const details = err.source instanceof ApiError ? err.source : null;
    if (details?.status === 503) c.header("Retry-After", "1");
    return json(c, {
      ok: false,
      error: err.code,
      ...(details ? { response_metadata: { messages: messagesOf(details) } } : {}),
    });
  }
  if (err instanceof ApiError) return json(c, { ok: false, error: slackCodeOf("", err) });
  throw err;
}

/** What a refusal says, field by field: Slack's `response_metadata.messages`. */
const messagesOf = (e: ApiError) =>
  e.errors ? Object.values(e.errors).flat().map((m) => `[ERROR] ${m}`) : [`[ERROR] ${e.message}`];
