import { Hono } from "hono";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Ctx } from "../domain/context.ts";
import { ApiError, invalid } from "../core/errors.ts";
import { BotLeftChannel, hookFor, postThroughHook } from "../domain/webhooks/incoming.ts";
import { errorResponse, httpErrorOf } from "./errors.ts";
import { HTTPException } from "hono/http-exception";
import { verifySender } from "../domain/webhooks/incoming_senders.ts";
import { messageView } from "../domain/views.ts";
import { settle } from "../core/settled.ts";
import type { GuessGuard } from "../domain/guards/guessing.ts";
import type { RateLimiter } from "../domain/guards/rate_limit.ts";
import { slackText } from "../domain/messages/slack_text.ts";
import { MAX_BODY_BYTES, parseJsonObject, readText } from "./body.ts";
import { clientAddress } from "./client_address.ts";
import type { ObservedVars } from "./middleware/observe.ts";
import { applyRateLimit } from "./middleware/rate_limit.ts";

const FORM = /^(application\/x-www-form-urlencoded|multipart\/form-data)/i;

const notAnObject = (field: string, why?: string) =>
  invalid(field, why ?? 'The payload must be a JSON object, like {"text": "Hello"}.');

/**
 * A JSON text that must hold an object: the body, the `payload` form field, or a form-typed JSON
 * body. One too complex to parse is refused on `text`, as Slack payloads nested too deep are.
 */
const objectFrom = (text: string, field: string) =>
  parseJsonObject(text, (why) => notAnObject(field, why), "text");

/**
 * The payload as Slack takes it: a JSON body, or form data (urlencoded or multipart) whose
 * `payload` field holds the JSON. A form-typed body that is itself JSON (what `curl -d` sends
 * without a Content-Type) is taken as JSON too.
 */
async function readPayload(c: Context, raw: string): Promise<Record<string, unknown>> {
  const type = c.req.header("Content-Type") ?? "";
  if (!FORM.test(type)) return parseJsonObject(raw, undefined, "text");
  if (/^multipart/i.test(type)) {
    let form: FormData;
    try {
      form = await new Response(raw, { headers: { "Content-Type": type } }).formData();
    } catch {
      throw new ApiError(400, "The request body is not readable form data.");
    }
    const payload = form.get("payload");
    if (typeof payload !== "string") throw invalid("payload", "The payload field is required.");
    return objectFrom(payload, "payload");
  }
  if (raw.trimStart().startsWith("{")) return objectFrom(raw, "request");
  const payload = new URLSearchParams(raw).get("payload");
  if (payload === null) throw invalid("payload", "The payload field is required.");
  return objectFrom(payload, "payload");
}

/**
 * POST /hooks/{secret}: Slack-compatible incoming webhooks. Checks in order: the secret (404,
 * counted against the client's address: 429 past the guessing limit), the hook's own rate limit
 * (429), the sender's signature where the hook wants one (401, counted as a guess), its channel
 * (404, archived 403), then the payload (422).
 */
export function hookRoutes(ctx: Ctx, limiter: RateLimiter, guard: GuessGuard) {
  return new Hono<{ Variables: ObservedVars }>().onError(hookRefusal).post(
    "/:secret",
    bodyLimit({ maxSize: MAX_BODY_BYTES }),
    async (c) => {
      const hook = await guard.lookup(
        clientAddress(c, ctx.settings.trustProxy),
        "incoming_webhook",
        () => hookFor(ctx, c.req.param("secret")),
      );
      c.set("credential", { incoming_webhook_id: hook.id });
      await applyRateLimit(c, limiter, `hook:${hook.id}`);
      const raw = await readText(c);
      // A refused signature counts as a guess: forging one is guessing the secret.
      const once = await guard.lookup(
        clientAddress(c, ctx.settings.trustProxy),
        "incoming_signature",
        () => verifySender(ctx, hook, { headers: c.req.raw.headers, body: raw, nowMs: Date.now() }),
      );
      const payload = await settle(
        readPayload(c, raw).then((p) => ({
          text: slackText(p),
          blocks: p.blocks,
          attachments: p.attachments,
        })),
      );
      const message = await postThroughHook(ctx, hook, payload, once);
      // Slack's answer, which scripts written for Slack check for; JSON for clients that ask.
      if (acceptsJson(c.req.header("Accept"))) {
        return c.json({ data: messageView(message) }, 201);
      }
      return c.text("ok", 200);
    },
  ).on(["GET", "HEAD", "PUT", "PATCH", "DELETE"], "/:secret", (c) => {
    c.header("Allow", "POST");
    return c.json({
      message: 'An incoming webhook takes a POST with a JSON body, such as {"text": "Hello"}.',
    }, 405);
  });
}

/**
 * Slack's answer to a refused post, as plain text, for scripts written against Slack's hooks
 * (decisions.md, "Incoming webhooks"): its status and code. Null: answered as JSON, as the rest of
 * the API is (401 and 429, with their headers; a failure of the service's own).
 */
function slackRefusalOf(err: Error): [400 | 403 | 404 | 410 | 413, string] | null {
  if (err instanceof BotLeftChannel) return [403, "action_prohibited"];
  const status = err instanceof ApiError || err instanceof HTTPException ? err.status : 500;
  if (status === 422) {
    const field = Object.keys((err as ApiError).errors ?? {})[0];
    return [400, field === "text" ? "no_text" : "invalid_payload"];
  }
  const plain: Record<number, [400 | 403 | 404 | 410 | 413, string]> = {
    400: [400, "invalid_payload"],
    403: [410, "channel_is_archived"],
    404: [404, "no_service"],
    413: [413, "request_too_large"],
  };
  return plain[status] ?? null;
}

/** A refused post: Slack's plain text, or JSON for a client that asks for it. */
function hookRefusal(thrown: Error, c: Context): Response {
  const refusal = acceptsJson(c.req.header("Accept")) ? null : slackRefusalOf(httpErrorOf(thrown));
  return refusal ? c.text(refusal[1], refusal[0]) : errorResponse(thrown, c);
}

/** Whether the client asked for JSON (`Accept: application/json`), not merely accepts anything. */
const acceptsJson = (accept: string | undefined) => /\bapplication\/json\b/i.test(accept ?? "");
