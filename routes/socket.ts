/**
 * GET /socket/<ticket>: a Socket Mode connection (decisions.md, "Apps without a public URL"), opened
 * with the single-use URL `apps.connections.open` gave. A ticket unknown, used or past its minute
 * is 401 before any upgrade; a token whose connection here was just closed for flooding, 429.
 * `debug_reconnects=true`, in the query or appended to the URL as Slack's docs show
 * (`&debug_reconnects=true`), makes the connection live 360 s.
 */
import { Hono } from "hono";
import type { Ctx } from "../domain/context.ts";
import type { AppCarrier } from "../domain/app_carrier.ts";
import { takeTicket } from "../domain/apps/socket/tickets.ts";
import { ApiError } from "../core/errors.ts";

/** Deno pings a connection silent for half of this, and closes it after as long again. */
const IDLE_TIMEOUT_S = 40;

export function socketRoutes(ctx: Ctx, sockets: AppCarrier) {
  return new Hono().get("/:ticket", async (c) => {
    const [ticket, ...rest] = c.req.param("ticket").split("&");
    const debugReconnects = c.req.query("debug_reconnects") === "true" ||
      rest.includes("debug_reconnects=true");
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
      throw new ApiError(400, "This is a Socket Mode URL: connect to it with a WebSocket.");
    }
    const taken = await takeTicket(ctx, ticket);
    if (!taken) {
      throw new ApiError(
        401,
        "This connection URL is unknown, used, or expired: ask apps.connections.open for another.",
      );
    }
    const wait = sockets.waitOf(taken.token.id);
    if (wait > 0) {
      throw new ApiError(
        429,
        "A connection of this token was closed for sending past its budget: connect again later.",
        undefined,
        { "Retry-After": String(Math.ceil(wait / 1000)) },
      );
    }
    const { socket, response } = Deno.upgradeWebSocket(c.req.raw, { idleTimeout: IDLE_TIMEOUT_S });
    sockets.accept(socket, { ...taken, debugReconnects });
    return response;
  });
}
