import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Ctx } from "../domain/context.ts";
import type { GuessGuard } from "../domain/guards/guessing.ts";
import { replyThroughUrl } from "../domain/apps/responses.ts";
import { replyOf } from "../domain/apps/replies.ts";
import { clientAddress } from "./client_address.ts";
import { MAX_BODY_BYTES, readJsonObject } from "./body.ts";

/**
 * POST /responses/<secret>: an app's reply through the `response_url` it was given, JSON as
 * Slack's (`text`, `blocks`, `response_type`, `replace_original`, `delete_original`). An unknown
 * secret counts against the client's address, as secret URLs do.
 */
export function responseRoutes(ctx: Ctx, guard: GuessGuard) {
  return new Hono().post("/:secret", bodyLimit({ maxSize: MAX_BODY_BYTES }), async (c) => {
    const secret = c.req.param("secret");
    const body = await readJsonObject(c);
    await guard.lookup(
      clientAddress(c, ctx.settings.trustProxy),
      "response_url",
      () => replyThroughUrl(ctx, { secret, reply: replyOf(body) }),
    );
    return c.json({ ok: true });
  });
}
