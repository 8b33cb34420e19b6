import type { Context } from "hono";
import type { Ctx } from "../domain/context.ts";
import { storeAnswers } from "../domain/data/operations.ts";

/** GET /up: 200 when the service and its KV answer, 503 when KV does not. */
export const upHandler = (ctx: Ctx) => async (c: Context) =>
  await storeAnswers(ctx)
    ? c.json({ status: "ok" })
    : c.json({ status: "unavailable", message: "The KV store does not answer." }, 503);
