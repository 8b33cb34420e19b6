/**
 * The one way to apps that the domain and the routes see (issue 68): the domain builds what goes
 * to an app (an AppRequest, domain/apps/app_call.ts; events, through the outbox), and one carrier
 * below it, delivery/apps/sender.ts, takes it there over HTTP or Socket Mode. The routes hand it
 * the Socket Mode connections they accept; no transport, timer or socket lives in domain/apps/.
 */
import type { App, AppToken } from "../core/app_records.ts";
import type { AppCalls } from "./apps/app_call.ts";

/** What a Socket Mode connection's single-use ticket granted (domain/apps/socket/tickets.ts). */
export interface SocketGrant {
  app: App;
  token: AppToken;
  /** `debug_reconnects=true`: the connection lives 360 s, as Slack's does. */
  debugReconnects: boolean;
}

/** Calls and what comes of them later, and the Socket Mode connections the carrier takes. */
export interface AppCarrier extends AppCalls {
  /** Takes a Socket Mode connection its ticket opened: `hello`, or `disconnect` past the cap. */
  accept(socket: WebSocket, grant: SocketGrant): void;
  /** How long (ms) a token whose connection here was closed for flooding waits to connect again. */
  waitOf(tokenId: string): number;
}
