/**
 * `apps.connections.open` (decisions.md, "Apps without a public URL"): the one method an app-level
 * `xapp-` token calls, as `Authorization: Bearer` only; it answers a single-use WebSocket URL.
 */
import type { Ctx } from "../../domain/context.ts";
import { APP_TOKEN_PREFIX, appOfAppToken } from "../../domain/apps/socket/app_tokens.ts";
import { connectionUrl } from "../../domain/apps/socket/tickets.ts";
import { SlackError } from "./errors.ts";

export const CONNECTIONS_OPEN = "apps.connections.open";

/** Whether a token is an app-level one: it opens connections and calls nothing else. */
export const isAppToken = (token: string | undefined) => !!token?.startsWith(APP_TOKEN_PREFIX);

/** The connection URL for the app whose app-level token `header` carries. */
export async function openConnection(
  ctx: Ctx,
  { header, inBody, reached }: { header: string | undefined; inBody: boolean; reached: string },
): Promise<{ url: string; tokenId: string }> {
  if (!header) throw new SlackError(inBody ? "invalid_auth" : "not_authed");
  if (!isAppToken(header)) throw new SlackError("not_allowed_token_type");
  const found = await appOfAppToken(ctx, header);
  if (!found) throw new SlackError("invalid_auth");
  if (!found.app.socket_mode_enabled) throw new SlackError("socket_mode_not_enabled");
  const url = await connectionUrl(ctx, { app: found.app, tokenHash: found.hash, reached });
  return { url, tokenId: found.token.id };
}
