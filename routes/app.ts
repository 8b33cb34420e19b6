import { eventTypeRoutes } from "./event_types.ts";
import { eventCatalog } from "../domain/webhooks/catalog.ts";
import { Hono } from "hono";
import { getPathNoStrict } from "hono/utils/url";
import { pathWithStoredIds } from "../core/ids.ts";
import { bodyLimit } from "hono/body-limit";
import type { Ctx } from "../domain/context.ts";
import { channelRoutes } from "./channels.ts";
import { MAX_BODY_BYTES } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { eventRoutes } from "./events.ts";
import { hookRoutes } from "./hooks.ts";
import { metricsHandler } from "./metrics.ts";
import { observe, type ObservedVars } from "./middleware/observe.ts";
import { headerGuard } from "./middleware/header_guard.ts";
import { errorResponse } from "./errors.ts";
import { unmatched } from "./unmatched.ts";
import { memberRoutes } from "./members.ts";
import { userRoutes } from "./users.ts";
import { messageRoutes } from "./messages.ts";
import { bearerAuth } from "./middleware/auth.ts";
import { platformSwitch } from "./middleware/platform.ts";
import { rateLimit } from "./middleware/rate_limit.ts";
import { GuessGuard } from "../domain/guards/guessing.ts";
import type { StreamHub } from "../domain/stream/hub.ts";
import { RateLimiter } from "../domain/guards/rate_limit.ts";
import { apiReferenceHandler, redocScriptHandler } from "./api_reference.ts";
import { authorizeRoutes } from "./oauth/authorize.tsx";
import { metadataHandler, tokenRoutes } from "./oauth/token.ts";
import { openapiHandler } from "./openapi.ts";
import { reactionRoutes } from "./reactions.ts";
import { actionRoutes } from "./actions.ts";
import { homeRoutes } from "./homes.ts";
import { agentRoutes } from "./agents.ts";
import { ephemeralRoutes } from "./ephemeral.ts";
import { globalShortcutRoutes, messageShortcutRoutes, shortcutListRoutes } from "./shortcuts.ts";
import { viewRoutes } from "./views.ts";
import { pollRoutes } from "./polls.ts";
import { settingsRoutes } from "./settings/app.tsx";
import { upHandler } from "./up.ts";
import { build } from "../domain/data/operations.ts";
import { webhookRoutes } from "./webhooks.ts";
import { slackWebApi } from "./slack/web_api.ts";
import { commandListRoutes, commandRunRoutes } from "./commands.ts";
import { responseRoutes } from "./responses.ts";
import type { AppCarrier } from "../domain/app_carrier.ts";
import { socketRoutes } from "./socket.ts";
import { adminRoutes } from "./admin.ts";
import type { AdminRunner } from "../domain/data/admin_requests.ts";

/** GET /: where things are, for a person or a probe that found the service, and what runs. */
const indexOf = (base: string) => ({
  name: "Team chat integrations",
  version: build.version,
  store_layout: build.layout,
  links: {
    health: `${base}/up`,
    openapi: `${base}/api/v1/openapi.yaml`,
    reference: `${base}/api/v1/docs`,
    api: `${base}/api/v1`,
    settings: `${base}/settings/integrations`,
  },
});

/**
 * The whole HTTP surface: /up, /api/v1, the webhook endpoints and the settings screen. `close`
 * ends its event streams (their clients come back elsewhere) and stops its background work
 * (the rate limit's count syncing): call it before the server's shutdown, which waits for
 * every open response. `streams` serves GET /events/stream, hearing of this process's commits
 * through the store's bus (main.ts subscribes it); `calls` carries what apps are asked and takes
 * their Socket Mode connections.
 */
export function createApp(
  ctx: Ctx,
  { streams, calls, admin }: {
    streams: StreamHub;
    calls: AppCarrier;
    /** The admin commands, run for a CLI elsewhere (`ADMIN_URL`; routes/admin.ts). */
    admin: AdminRunner;
  },
) {
  const limiter = new RateLimiter(ctx.kv, ctx.settings.rateLimit);
  const guard = new GuessGuard(ctx.kv);
  // Made once, for the API and the settings screen: it changes only with a release.
  const catalog = eventCatalog();
  const api = new Hono<ApiEnv>()
    .get("/openapi.yaml", openapiHandler)
    .get("/docs", apiReferenceHandler)
    .get("/docs/:file", redocScriptHandler)
    .use(bearerAuth(ctx), rateLimit(limiter))
    .use(bodyLimit({ maxSize: MAX_BODY_BYTES }))
    .route("/channels", channelRoutes(ctx))
    .route("/channels", memberRoutes(ctx))
    .route("/channels", messageRoutes(ctx))
    .route("/channels", reactionRoutes(ctx))
    .route("/channels", pollRoutes(ctx))
    .route("/channels", commandRunRoutes(ctx, calls))
    .route("/channels", actionRoutes(ctx, calls))
    .route("/channels", messageShortcutRoutes(ctx, calls))
    .route("/commands", commandListRoutes(ctx))
    .route("/views", viewRoutes(ctx, calls))
    .route("/apps", homeRoutes(ctx))
    .route("/apps", globalShortcutRoutes(ctx, calls))
    .route("/apps", agentRoutes(ctx))
    .route("/shortcuts", shortcutListRoutes(ctx))
    .route("/ephemeral", ephemeralRoutes(ctx, calls))
    .route("/users", userRoutes(ctx))
    .route("/webhooks", webhookRoutes(ctx))
    .route("/events", eventRoutes(ctx, streams))
    .route("/event-types", eventTypeRoutes(catalog));

  // Not strict: a trailing slash names the same resource (`/api/v1/channels/` is `/channels`).
  // And a UUID in the path names the same record in any case: routes see it as ids are stored.
  const app = new Hono<{ Variables: ObservedVars }>({
    getPath: (request) => pathWithStoredIds(getPathNoStrict(request)),
  });
  app.onError(errorResponse);
  app.notFound(unmatched(() => app.routes));
  app.use(headerGuard());
  app.use(observe());
  app.get("/", (c) => c.json(indexOf(ctx.settings.baseUrl)));
  app.get("/up", upHandler(ctx));
  app.get("/metrics", metricsHandler(ctx));
  app.use("/api/*", platformSwitch(ctx.settings.integrationsEnabled));
  app.use("/hooks/*", platformSwitch(ctx.settings.integrationsEnabled));
  app.use("/settings/*", platformSwitch(ctx.settings.integrationsEnabled));
  app.use("/oauth/*", platformSwitch(ctx.settings.integrationsEnabled));
  app.use("/.well-known/*", platformSwitch(ctx.settings.integrationsEnabled));
  app.use("/oauth/*", bodyLimit({ maxSize: MAX_BODY_BYTES }));
  app.route("/api/v1", api);
  app.route("/api/slack", slackWebApi(ctx, limiter));
  app.use("/socket/*", platformSwitch(ctx.settings.integrationsEnabled));
  app.route("/socket", socketRoutes(ctx, calls));
  app.route("/hooks", hookRoutes(ctx, limiter, guard));
  app.use("/responses/*", platformSwitch(ctx.settings.integrationsEnabled));
  app.route("/responses", responseRoutes(ctx, guard));
  app.route("/settings", settingsRoutes(ctx, guard, catalog));
  app.route("/oauth", authorizeRoutes(ctx));
  app.route("/oauth", tokenRoutes(ctx, guard));
  app.get("/.well-known/oauth-authorization-server", metadataHandler(ctx));
  // The operator's: not part of the platform INTEGRATIONS_ENABLED switches, but of ADMIN_REMOTE.
  app.route("/admin", adminRoutes(ctx, { runner: admin, guard }));
  return Object.assign(app, {
    close: async () => {
      await streams.closeAll();
      await limiter.close();
      await calls.close();
    },
  });
}
