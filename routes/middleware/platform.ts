import type { MiddlewareHandler } from "hono";

/** The master switch: with integrations off, the API and webhook endpoints do not exist. */
export const platformSwitch = (enabled: boolean): MiddlewareHandler => async (c, next) => {
  if (!enabled) return c.json({ message: "Not found." }, 404);
  await next();
};
