/**
 * How a Socket Mode app stands, for its operator (`app:deliveries`) and for `/metrics`: its open
 * connections per instance, how many of its events wait, and for how long the oldest has.
 */
import type { Ctx } from "../../context.ts";
import type { AppInstall, SocketStatus } from "../../../core/app_records.ts";
import { authorize } from "../../policy.ts";
import type { Actor } from "../../principals.ts";
import { keys } from "../../../kv/keys.ts";
import { pendingOf, socketCounts } from "../../../kv/apps/socket_queue.ts";
import { livePresences } from "./presence.ts";
import {
  socketBacklog,
  socketConnections,
  socketDropped,
  socketOldestPending,
} from "../../../core/metrics.ts";

/** How an app installed in the team stands over Socket Mode: for the team's admins. */
export function installSocketStatus(
  ctx: Ctx,
  { install, actor }: { install: AppInstall; actor: Actor },
): Promise<SocketStatus> {
  authorize(actor, "app.uninstall", { team_id: install.team_id });
  return socketStatus(ctx, install.app_id);
}

export async function socketStatus(ctx: Ctx, appId: string): Promise<SocketStatus> {
  const now = Date.now();
  const connections = (await livePresences(ctx, appId)).map(({ instance, presence }) => ({
    instance,
    connections: presence.connections,
    seen_at: new Date(presence.seen_at).toISOString(),
  }));
  const [oldest] = await pendingOf(ctx.kv, appId, 1);
  const { backlog, acked, dropped } = await socketCounts(ctx.kv, appId);
  return {
    connections,
    backlog,
    oldest_pending_age_seconds: oldest
      ? Math.max(0, (now - Date.parse(oldest.entry.value.created_at)) / 1000)
      : null,
    acked,
    dropped,
  };
}

/** The apps with events counted or connections open: those `/metrics` reports on. */
export async function socketApps(ctx: Ctx): Promise<string[]> {
  const ids = new Set<string>();
  for (const prefix of [keys.socketCountsAll(), keys.socketPresenceAll()]) {
    for await (const e of ctx.kv.list({ prefix })) ids.add(e.key[1] as string);
  }
  return [...ids];
}

/** Sets the Socket Mode gauges from the store, where every instance records its part. */
export async function measureSockets(ctx: Ctx): Promise<void> {
  for (const gauge of [socketConnections, socketBacklog, socketOldestPending, socketDropped]) {
    gauge.reset();
  }
  for (const appId of await socketApps(ctx)) {
    const status = await socketStatus(ctx, appId);
    for (const c of status.connections) {
      socketConnections.set({ app_id: appId, instance: c.instance }, c.connections);
    }
    socketBacklog.set({ app_id: appId }, status.backlog);
    socketOldestPending.set({ app_id: appId }, status.oldest_pending_age_seconds ?? 0);
    socketDropped.set({ app_id: appId }, status.dropped);
  }
}
