import type { MiddlewareHandler } from "hono";
import { forbidden } from "../../core/errors.ts";
import type { Scope } from "../../core/types.ts";
import type { ApiEnv } from "../env.ts";

/** Each endpoint needs exactly one scope; a token without it gets 403. */
export const requireScope = (scope: Scope): MiddlewareHandler<ApiEnv> => async (c, next) => {
  if (!c.var.subject.scopes.includes(scope)) {
    throw forbidden(`This token lacks the ${scope} scope.`);
  }
  await next();
};
