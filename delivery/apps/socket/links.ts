/**
 * Whether the links of this instance's connections still stand, and closing with `link_disabled`
 * those that don't: a token revoked, an app deleted or out of Socket Mode, or the app's last
 * install gone (its links closed at a time: connections opened before it). Changes made by the
 * CLI in another process are found by reading.
 */
import type { Ctx } from "../../../domain/context.ts";
import { linksClosedOf } from "../../../kv/apps/socket_queue.ts";
import type { SocketConnection } from "./connection.ts";
import { standingTokens } from "../../../domain/apps/socket/presence.ts";

/** Each app's connections here. */
export type Held = ReadonlyMap<string, readonly SocketConnection[]>;

/** Closes the connections of `appIds` opened before their app's links were closed. */
export async function closeEnded(ctx: Ctx, held: Held, appIds: string[]): Promise<void> {
  for (const [appId, at] of await linksClosedOf(ctx.kv, appIds)) {
    for (const conn of held.get(appId) ?? []) {
      if (conn.openedAt <= at) conn.disconnect("link_disabled");
    }
  }
}

/** Closes every connection here whose token, app or install no longer stands. */
export async function closeUnlinked(ctx: Ctx, held: Held): Promise<void> {
  const apps = [...held];
  const standing = await standingTokens(
    ctx,
    apps.map(([appId, list]) => ({
      appId,
      tokenIds: [...new Set(list.map((c) => c.app.tokenId))],
    })),
  );
  for (const [appId, list] of apps) {
    for (const conn of list) {
      if (!standing.get(appId)?.has(conn.app.tokenId)) conn.disconnect("link_disabled");
    }
  }
  await closeEnded(ctx, held, apps.map(([appId]) => appId));
}
