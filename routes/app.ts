import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Ctx } from "../domain/context.ts";
import { channelRoutes } from "./channels.ts";
import { MAX_BODY_BYTES } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { hookRoutes } from "./hooks.ts";
import { errorResponse, notFoundResponse } from "./errors.ts";
import { memberRoutes } from "./members.ts";
import { messageRoutes } from "./messages.ts";
import { bearerAuth } from "./middleware/auth.ts";
import { platformSwitch } from "./middleware/platform.ts";
import { rateLimit } from "./middleware/rate_limit.ts";
import { RateLimiter } from "../domain/rate_limit.ts";
import { openapiHandler } from "./openapi.ts";
import { reactionRoutes } from "./reactions.ts";
import { upHandler } from "./up.ts";
import { webhookRoutes } from "./webhooks.ts";

/**
 * The whole HTTP surface: /up, /api/v1 and the webhook endpoints. `close` stops its background
 * work (the rate limit's count syncing).
 */
export function createApp(ctx: Ctx) {
  const limiter = new RateLimiter(ctx.kv, ctx.settings.rateLimit);
  const api = new Hono<ApiEnv>()
    .get("/openapi.yaml", openapiHandler)
    .use(bearerAuth(ctx), rateLimit(ctx, limiter))
    .use(bodyLimit({ maxSize: MAX_BODY_BYTES }))
    .route("/channels", channelRoutes(ctx))
    .route("/channels", memberRoutes(ctx))
    .route("/channels", messageRoutes(ctx))
    .route("/channels", reactionRoutes(ctx))
    .route("/webhooks", webhookRoutes(ctx));

  const app = new Hono();
  app.onError(errorResponse);
  app.notFound(notFoundResponse);
  app.get("/up", upHandler(ctx.kv));
  app.use("/api/*", platformSwitch(ctx.settings.integrationsEnabled));
  app.use("/hooks/*", platformSwitch(ctx.settings.integrationsEnabled));
  app.route("/api/v1", api);
  app.route("/hooks", hookRoutes(ctx, limiter));
  return Object.assign(app, { close: () => limiter.close() });
}
