import type { Context } from "hono";
import type { Ctx } from "../domain/context.ts";
import { storeAnswers, storeFileGone } from "../domain/data/operations.ts";

/**
 * GET /up: 200 when the service and its KV answer; 503 when KV does not, or when its store file
 * was deleted under it (it would answer for a store nobody else sees).
 */
export const upHandler = (ctx: Ctx) => async (c: Context) => {
  const gone = await storeFileGone(ctx);
  if (gone) return c.json({ status: "unavailable", message: gone }, 503);
  return await storeAnswers(ctx)
    ? c.json({ status: "ok" })
    : c.json({ status: "unavailable", message: "The KV store does not answer." }, 503);
};
