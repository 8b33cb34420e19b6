import type { MiddlewareHandler } from "hono";
import type { Ctx } from "../../domain/context.ts";
import { authenticate } from "../../domain/tokens.ts";
import type { ApiEnv } from "../env.ts";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Resolves `Authorization: Bearer <token>` to the request's subject, or answers 401. */
export const bearerAuth = (ctx: Ctx): MiddlewareHandler<ApiEnv> => async (c, next) => {
  const header = c.req.header("Authorization") ?? "";
  const subject = await authenticate(ctx, BEARER.exec(header)?.[1]);
  c.set("subject", subject);
  await next();
};
