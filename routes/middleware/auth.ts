import type { MiddlewareHandler } from "hono";
import type { Ctx } from "../../domain/context.ts";
import { identify, verifySubject } from "../../domain/authenticate.ts";
import type { ApiEnv } from "../env.ts";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Resolves `Authorization: Bearer <token>` to the request's subject, or answers 401. A
 * remembered token is checked again by the request's first read: loadChannelWith reads it with
 * the channel, and the writes that load no channel call verifySubject before anything else.
 * Whatever is left unsettled is settled here before the answer leaves, errors included.
 */
export const bearerAuth = (ctx: Ctx): MiddlewareHandler<ApiEnv> => async (c, next) => {
  const header = c.req.header("Authorization") ?? "";
  const subject = await identify(ctx, BEARER.exec(header)?.[1]);
  c.set("subject", subject);
  c.set("credential", { token_id: subject.token_id });
  await next();
  await verifySubject(ctx, subject);
};
