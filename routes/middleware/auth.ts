import type { MiddlewareHandler } from "hono";
import type { Ctx } from "../../domain/context.ts";
import { authenticate } from "../../domain/people/authenticate.ts";
import type { ApiEnv } from "../env.ts";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Resolves `Authorization: Bearer <token>` to the request's subject from the token as it is now,
 * or answers 401: decided before the handler runs, so nothing a handler reads or writes is done
 * with a token that turns out revoked, expired or unknown.
 */
export const bearerAuth = (ctx: Ctx): MiddlewareHandler<ApiEnv> => async (c, next) => {
  const header = c.req.header("Authorization") ?? "";
  const subject = await authenticate(ctx, BEARER.exec(header)?.[1]);
  c.set("subject", subject);
  c.set("credential", { token_id: subject.token_id });
  await next();
};
