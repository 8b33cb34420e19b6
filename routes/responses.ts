import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { bodyLimit } from "hono/body-limit";
import type { Ctx } from "../domain/context.ts";
import type { GuessGuard } from "../domain/guards/guessing.ts";
import { replyThroughUrl } from "../domain/apps/responses.ts";
import { replyOf } from "../domain/apps/replies.ts";
import { clientAddress } from "./client_address.ts";
import { MAX_BODY_BYTES, readJsonObject } from "./body.ts";
import { errorResponse } from "./errors.ts";

/** Slack's code for a refused reply, by status, and by field for a 422. */
function refusalCode(status: number, errors: Record<string, unknown> | undefined): string {
  if (status === 422) {
    const field = Object.keys(errors ?? {})[0];
    return field === "blocks"
      ? "invalid_blocks"
      : field === "text" || field === "body"
      ? "no_text"
      : "invalid_arguments";
  }
  const codes: Record<number, string> = {
    400: "invalid_payload",
    403: "restricted_action",
    404: "expired_url",
    413: "request_too_large",
    429: "rate_limited",
  };
  return codes[status] ?? "internal_error";
}

/**
 * A refusal as Slack gives it to `response_url` callers (`{ ok: false, error }`, which Bolt's
 * `respond` reads), with the service's own `message` and `errors` beside it.
 */
async function slackRefusal(err: Error, c: Context): Promise<Response> {
  const res = errorResponse(err, c);
  const body = await res.json() as { message: string; errors?: Record<string, unknown> };
  return c.json(
    { ok: false, error: refusalCode(res.status, body.errors), ...body },
    res.status as ContentfulStatusCode,
  );
}

/**
 * POST /responses/<secret>: an app's reply through the `response_url` it was given, JSON as
 * Slack's (`text`, `blocks`, `response_type`, `replace_original`, `delete_original`). An unknown
 * secret counts against the client's address, as secret URLs do. A refusal is Slack's.
 */
export function responseRoutes(ctx: Ctx, guard: GuessGuard) {
  return new Hono().onError(slackRefusal).post(
    "/:secret",
    bodyLimit({ maxSize: MAX_BODY_BYTES }),
    async (c) => {
      const secret = c.req.param("secret");
      const body = await readJsonObject(c);
      await guard.lookup(
        clientAddress(c, ctx.settings.trustProxy),
        "response_url",
        () => replyThroughUrl(ctx, { secret, reply: replyOf(body) }),
      );
      return c.json({ ok: true });
    },
  );
}
