/**
 * Which instances hold an app's connections: each renews a presence record per app while it holds
 * some (kv/keys.ts `socket_presence`), so `hello` counts the app's connections everywhere and the
 * eleventh is refused. And whether a connection's links still stand: its token, its app, Socket
 * Mode on. Revocations are made by the CLI in another process: they are found by reading.
 */
import type { Ctx } from "../../context.ts";
import type { App, SocketPresence } from "../../../core/app_records.ts";
import { keys } from "../../../kv/keys.ts";
import { commitInBatches, getAll } from "../../../kv/commit.ts";

/** A presence not renewed for this long is of an instance gone. */
export const PRESENCE_TTL_MS = 60_000;

/** The instances holding some of the app's connections, by presence records not run out. */
export async function livePresences(
  ctx: Ctx,
  appId: string,
): Promise<{ instance: string; presence: SocketPresence }[]> {
  const now = Date.now();
  const live = [];
  for await (const e of ctx.kv.list<SocketPresence>({ prefix: keys.socketPresences(appId) })) {
    if (e.value.seen_at > now - PRESENCE_TTL_MS) {
      live.push({ instance: e.key[2] as string, presence: e.value });
    }
  }
  return live;
}

/** The app's connections on instances other than `instance`, by their presence records. */
export async function connectionsElsewhere(
  ctx: Ctx,
  { appId, instance }: { appId: string; instance: string },
): Promise<number> {
  return (await livePresences(ctx, appId))
    .reduce((n, p) => p.instance === instance ? n : n + p.presence.connections, 0);
}

/** Records how many of the app's connections `instance` holds (none: the record goes). */
export async function recordPresence(
  ctx: Ctx,
  { appId, instance, connections }: { appId: string; instance: string; connections: number },
): Promise<void> {
  const key = keys.socketPresence(appId, instance);
  if (connections === 0) {
    await ctx.kv.delete(key);
    return;
  }
  const record: SocketPresence = { connections, host: instance, seen_at: Date.now() };
  await ctx.kv.set(key, record, { expireIn: PRESENCE_TTL_MS });
}

/** Renews the presence of every app `instance` holds connections of, in as few commits as fit. */
export async function renewPresences(
  ctx: Ctx,
  { instance, held }: { instance: string; held: Map<string, number> },
): Promise<void> {
  const seen_at = Date.now();
  await commitInBatches(ctx.kv, [...held], 500, (op, [appId, connections]) => {
    const record: SocketPresence = { connections, host: instance, seen_at };
    op.set(keys.socketPresence(appId, instance), record, { expireIn: PRESENCE_TTL_MS });
  });
}

/**
 * Of each app's `tokenIds`, those still standing for an app in Socket Mode (none when it left
 * it), for every app in one read.
 */
export async function standingTokens(
  ctx: Ctx,
  apps: { appId: string; tokenIds: string[] }[],
): Promise<Map<string, Set<string>>> {
  const entries = await getAll<unknown>(
    ctx.kv,
    apps.flatMap(({ appId, tokenIds }) => [
      keys.app(appId),
      ...tokenIds.map((t) => keys.appTokenId(appId, t)),
    ]),
  );
  const standing = new Map<string, Set<string>>();
  let at = 0;
  for (const { appId, tokenIds } of apps) {
    const [app, ...tokens] = entries.slice(at, at += 1 + tokenIds.length);
    const on = (app.value as App | null)?.socket_mode_enabled === true;
    standing.set(
      appId,
      new Set(on ? tokens.flatMap((t) => t.value ? [t.key[2] as string] : []) : []),
    );
  }
  return standing;
}
