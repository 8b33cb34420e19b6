/**
 * Which instances hold an app's connections: each renews a presence record per app while it holds
 * some (kv/keys.ts `socket_presence`), so `hello` counts the app's connections everywhere and the
 * eleventh is refused, even when connections open at once on several instances: every write of
 * an app's presences bumps its turn, which an opening's count-and-record checks. And whether a
 * connection's links still stand: its token, its app, Socket Mode on, an install left. Those
 * changes are made by the CLI in another process: they are found by reading.
 */
import type { Ctx } from "../../context.ts";
import type { App, SocketPresence } from "../../../core/app_records.ts";
import { keys } from "../../../kv/keys.ts";
import { getAll } from "../../../kv/store/commit.ts";
import { retrying } from "../../../core/retry.ts";
import { KeyedLock } from "../../../core/keyed_lock.ts";

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
async function connectionsElsewhere(
  ctx: Ctx,
  { appId, instance }: { appId: string; instance: string },
): Promise<number> {
  return (await livePresences(ctx, appId))
    .reduce((n, p) => p.instance === instance ? n : n + p.presence.connections, 0);
}

/**
 * Records one more connection of the app on `instance`, which holds `here()` now, unless the app
 * holds `max` across instances: counted and recorded in one commit that checks the app's turn, so
 * two instances never both take the last slot. The app's connections after it, or null: no slot.
 */
async function takeSlot(
  ctx: Ctx,
  { appId, instance, here, max }: {
    appId: string;
    instance: string;
    here: () => number;
    max: number;
  },
): Promise<number | null> {
  const turnKey = keys.socketPresenceTurn(appId);
  const slot = await retrying("open a socket mode connection", async () => {
    const turn = await ctx.kv.get(turnKey);
    const total = await connectionsElsewhere(ctx, { appId, instance }) + here();
    if (total >= max) return { taken: false, total };
    const record: SocketPresence = { connections: here() + 1, host: instance, seen_at: Date.now() };
    const res = await ctx.kv.atomic().check(turn)
      .set(keys.socketPresence(appId, instance), record, { expireIn: PRESENCE_TTL_MS })
      .sum(turnKey, 1n).commit();
    return res.ok ? { taken: true, total: total + 1 } : null;
  });
  return slot.taken ? slot.total : null;
}

/** Records how many of the app's connections `instance` holds (none: the record goes). */
async function recordPresence(
  ctx: Ctx,
  { appId, instance, connections }: { appId: string; instance: string; connections: number },
): Promise<void> {
  const key = keys.socketPresence(appId, instance);
  const op = ctx.kv.atomic().sum(keys.socketPresenceTurn(appId), 1n);
  if (connections === 0) op.delete(key);
  else {
    const record: SocketPresence = { connections, host: instance, seen_at: Date.now() };
    op.set(key, record, { expireIn: PRESENCE_TTL_MS });
  }
  await op.commit();
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

/**
 * One instance's presence: its count of each app's connections, written one write at a time per
 * app, each taken as it is when the write runs, so a count taken earlier never lands over a newer
 * one (and the cap holds).
 */
export class InstancePresence {
  readonly #writes = new KeyedLock();

  constructor(private readonly ctx: Ctx, readonly instance: string) {}

  /**
   * One more connection of the app here, which holds `here()`, unless the app is at `max`: then
   * `admit` runs, before any other write of the app's presence. The app's connections, or null.
   */
  take(
    appId: string,
    { here, max, admit }: { here: () => number; max: number; admit: () => void },
  ): Promise<number | null> {
    return this.#writes.run(appId, async () => {
      const total = await takeSlot(this.ctx, { appId, instance: this.instance, here, max });
      if (total !== null) admit();
      return total;
    });
  }

  /** Records the app's connections here, `count()` as it is when the write runs. */
  record(appId: string, count: () => number): Promise<void> {
    return this.#writes.run(
      appId,
      () => recordPresence(this.ctx, { appId, instance: this.instance, connections: count() }),
    );
  }

  /** The app's connections on other instances. */
  elsewhere(appId: string): Promise<number> {
    return connectionsElsewhere(this.ctx, { appId, instance: this.instance });
  }
}
