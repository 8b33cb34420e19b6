import type { MiddlewareHandler } from "hono";
import type { Ctx } from "../../domain/context.ts";
import { identify, verifySubject } from "../../domain/tokens.ts";
import type { ApiEnv } from "../env.ts";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

const READS = new Set(["GET", "HEAD"]);

/**
 * Resolves `Authorization: Bearer <token>` to the request's subject, or answers 401. A write
 * never runs on a remembered token: it is verified first. A read settles the check in its first
 * `getMany` (loadChannelWith) or, failing that, before its answer leaves, errors included.
 */
export const bearerAuth = (ctx: Ctx): MiddlewareHandler<ApiEnv> => async (c, next) => {
  const header = c.req.header("Authorization") ?? "";
  const subject = await identify(ctx, BEARER.exec(header)?.[1]);
  c.set("subject", subject);
  if (!READS.has(c.req.method)) await verifySubject(ctx, subject);
  await next();
  await verifySubject(ctx, subject);
};
