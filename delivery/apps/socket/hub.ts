/**
 * This instance's Socket Mode connections (decisions.md, "Apps without a public URL"), made where
 * the process starts. Events for a Socket Mode app wait in the store (kv/apps/socket_queue.ts) until a
 * connection acks them; the queue sender (queue_sender.ts) sends them to the app's connections
 * here. Commands and interactions are not kept: they go to a connection at once, or fail. Work
 * committed elsewhere is found by polling the socket signal.
 */
import { socketEnvelope } from "../../../core/slack_wire.ts";
import type { Ctx } from "../../../domain/context.ts";
import type { App, AppToken, SocketCall } from "../../../core/app_records.ts";
import { newId } from "../../../core/ids.ts";
import { within } from "../../../core/settled.ts";
import { errorFields, log } from "../../../core/log.ts";
import type { Committed } from "../../../kv/store/plan.ts";
import {
  appSignals,
  socketCountsOf,
  socketSignal,
  trimPending,
} from "../../../kv/apps/socket_queue.ts";
import { envelopeIdIn, SocketConnection } from "./connection.ts";
import { InstancePresence } from "../../../domain/apps/socket/presence.ts";
import { closeEnded, closeUnlinked } from "./links.ts";
import { QueueSender } from "./queue_sender.ts";
import { Overruns } from "./overruns.ts";
import { type CallAnswer, relayCall, takeCalls } from "./relay.ts";

/** Connections an app may hold at once, across instances. */
export const MAX_CONNECTIONS = 10;
/** A connection whose URL asked for `debug_reconnects=true` lives this long. */
export const DEBUG_LIFETIME_MS = 360_000;
/** How often other instances' commits are looked for, while this one holds connections. */
const SIGNAL_POLL_MS = 50;
/** How often connections' links are checked and backlogs kept in bound; presence renewed. */
const CHECK_MS = 5_000;
const PRESENCE_MS = 20_000;

/** A command or an interaction on its way to an app, and how long its sender waits. */
type Outgoing = Omit<SocketCall, "deadline"> & { timeoutMs: number };

export class SocketHub {
  readonly #instance = newId();
  readonly #byApp = new Map<string, SocketConnection[]>();
  readonly #queue: QueueSender;
  #signal: string | null = null;
  /** Each held app's own signal as last read: only apps whose signal moved are read again. */
  readonly #appSignals = new Map<string, string | null>();
  #poll: ReturnType<typeof setInterval> | undefined;
  #check: ReturnType<typeof setInterval> | undefined;
  #lastPresence = 0;
  readonly #presence: InstancePresence;
  readonly #overruns = new Overruns();
  #rr = 0;
  #closing = false;

  constructor(private readonly ctx: Ctx) {
    this.#queue = new QueueSender(ctx, (appId, avoid) => this.#pick(appId, avoid));
    this.#presence = new InstancePresence(ctx, this.#instance);
  }

  /** Whether an event for the app committed here may be claimed in the commit and sent at once. */
  readonly here = (appId: string): boolean =>
    (this.#byApp.get(appId)?.length ?? 0) > 0 && this.#queue.drained(appId);

  /** Connections here, per app. */
  connections(): Map<string, number> {
    return new Map([...this.#byApp].map(([app, list]) => [app, list.length]));
  }

  /**
   * Takes a new WebSocket of the app (its ticket taken): `hello` once open, or `disconnect`
   * `too_many_websockets` past MAX_CONNECTIONS.
   */
  accept(
    socket: WebSocket,
    { app, token, debugReconnects }: { app: App; token: AppToken; debugReconnects: boolean },
  ): void {
    const conn = new SocketConnection(socket, { appId: app.id, tokenId: token.id });
    const failed = (e: unknown) =>
      log.warn("socket mode: a connection failed", { app_id: app.id, ...errorFields(e) });
    // A connection that could not be counted is asked to come again, not left without `hello`.
    socket.onopen = () =>
      void this.#opened(conn, debugReconnects).catch((e) => {
        failed(e);
        conn.disconnect("refresh_requested");
      });
    socket.onmessage = (e) => void this.#message(conn, e.data).catch(failed);
    socket.onclose = () => this.#closed(conn);
    socket.onerror = () => {};
  }

  async #opened(conn: SocketConnection, debugReconnects: boolean) {
    const { appId } = conn.app;
    if (this.#closing) return conn.disconnect("refresh_requested");
    const total = await this.#presence.take(appId, {
      here: () => this.#byApp.get(appId)?.length ?? 0,
      max: MAX_CONNECTIONS,
      admit: () => this.#byApp.set(appId, [...this.#byApp.get(appId) ?? [], conn]),
    });
    if (total === null) return conn.disconnect("too_many_websockets");
    if (this.#closing) conn.disconnect("refresh_requested");
    if (!conn.open) return this.#closed(conn);
    const lifetimeMs = debugReconnects
      ? DEBUG_LIFETIME_MS
      : this.ctx.settings.socketMode.lifetimeMs;
    conn.send({
      type: "hello",
      num_connections: total,
      debug_info: {
        host: `teamchat-${this.#instance.slice(-8)}`,
        build_number: 1,
        approximate_connection_time: Math.round(lifetimeMs / 1000),
      },
      connection_info: { app_id: appId },
    });
    conn.live(lifetimeMs);
    this.#startTimers();
    this.#queue.read(appId);
  }

  /**
   * A frame from the app: an ack of what it was sent on this connection, or nothing. A frame
   * past its budget closes the connection; one naming no envelope it holds is dropped unparsed,
   * with no store read, so a flood costs this instance no more than its budget of scans.
   */
  async #message(conn: SocketConnection, data: unknown) {
    if (!conn.admits(data)) {
      if (conn.overran) this.#overruns.add(conn.app.tokenId);
      return;
    }
    if (typeof data !== "string") return;
    const named = envelopeIdIn(data);
    if (named === null || !conn.expects(named)) return;
    let message: { envelope_id?: unknown; payload?: unknown } | null;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    const envelopeId = message?.envelope_id;
    if (envelopeId !== named) return;
    if (conn.acked(envelopeId, message!.payload)) return;
    if (conn.releases(envelopeId)) await this.#queue.acked(conn.app.appId, envelopeId);
  }

  #closed(conn: SocketConnection) {
    conn.ended();
    const { appId } = conn.app;
    const list = (this.#byApp.get(appId) ?? []).filter((c) => c !== conn);
    if (list.length > 0) this.#byApp.set(appId, list);
    else {
      this.#byApp.delete(appId);
      this.#appSignals.delete(appId);
    }
    this.#queue.closed(appId, conn, list.length === 0);
    this.#renewPresence(appId).catch(() => {});
  }

  /** How long a token must wait before its next connection here, in ms (delivery/apps/socket/overruns.ts). */
  waitOf(tokenId: string): number {
    return this.#overruns.waitOf(tokenId);
  }

  /** What this process committed: its claimed events go out at once, the rest are read. */
  heard(committed: Committed): void {
    const byId = new Map(committed.events.map((e) => [e.id, e]));
    const toRead = new Set<string>();
    for (const s of committed.sockets) {
      if (!this.#byApp.has(s.appId)) continue;
      const event = byId.get(s.eventId);
      if (s.claimed && event) this.#queue.sendClaimed(s, event);
      else toRead.add(s.appId);
    }
    for (const appId of toRead) this.#queue.read(appId);
  }

  /** One of the app's open connections here, round robin, another than `avoid` when there is one. */
  #pick(appId: string, avoid: string | null): SocketConnection | null {
    const open = (this.#byApp.get(appId) ?? []).filter((c) => c.open);
    if (open.length === 0) return null;
    const others = open.filter((c) => c.id !== avoid);
    const from = others.length > 0 ? others : open;
    return from[this.#rr++ % from.length];
  }

  /**
   * Sends a command or an interaction to one of the app's connections, here or through the store
   * on another instance, and waits for its ack up to `timeoutMs`: its payload, or why there is none.
   */
  async call(appId: string, call: Outgoing): Promise<CallAnswer> {
    if (this.#pick(appId, null)) return this.#callHere(appId, call);
    const elsewhere = await this.#presence.elsewhere(appId);
    if (elsewhere === 0) return "not connected";
    return relayCall(this.ctx, { appId, ...call });
  }

  async #callHere(
    appId: string,
    { type, payload, timeoutMs }: Outgoing,
  ): Promise<CallAnswer> {
    const conn = this.#pick(appId, null);
    if (!conn) return "not connected";
    const envelopeId = crypto.randomUUID();
    const answer = conn.awaitAck(envelopeId);
    const retry = { attempt: 0, reason: "" };
    if (!conn.send(socketEnvelope({ envelopeId, type, payload, answers: true, retry }))) {
      conn.forget(envelopeId);
      return "not connected";
    }
    if (!await within(answer, timeoutMs)) {
      conn.forget(envelopeId);
      return "timed out";
    }
    const got = await answer;
    return got === undefined ? "closed" : { payload: got };
  }

  #startTimers() {
    if (this.#poll) return;
    this.#poll = setInterval(() => void this.#pollSignal(), SIGNAL_POLL_MS);
    this.#check = setInterval(() => void this.#checkLinks(), CHECK_MS);
  }

  /** Another instance committed events for Socket Mode apps, or let some go: read our apps'. */
  async #pollSignal() {
    if (this.#byApp.size === 0) return;
    try {
      const seen = await socketSignal(this.ctx.kv);
      if (seen === this.#signal) return;
      this.#signal = seen;
      const stamps = await appSignals(this.ctx.kv, [...this.#byApp.keys()]);
      const moved = [...stamps].filter(([appId, stamp]) =>
        !this.#appSignals.has(appId) || this.#appSignals.get(appId) !== stamp
      );
      await closeEnded(this.ctx, this.#byApp, moved.map(([appId]) => appId));
      for (const [appId, stamp] of moved) {
        this.#appSignals.set(appId, stamp);
        if (!this.#byApp.has(appId)) continue;
        this.#queue.read(appId);
        await takeCalls(
          this.ctx,
          appId,
          (c, timeoutMs) => this.#callHere(appId, { ...c, timeoutMs }),
        );
      }
    } catch (e) {
      log.warn("socket mode: reading the signal failed", errorFields(e));
    }
  }

  /**
   * Closes with `link_disabled` the connections whose links no longer stand (links.ts; the
   * signal's poll closes those of an app's last install at once); keeps each app's backlog
   * within its bound; renews this instance's presence.
   */
  async #checkLinks() {
    try {
      await closeUnlinked(this.ctx, this.#byApp);
      const keep = this.ctx.settings.socketMode.backlog;
      for (
        const [appId, { backlog }] of await socketCountsOf(this.ctx.kv, [...this.#byApp.keys()])
      ) {
        if (backlog > keep) await trimPending(this.ctx.kv, { appId, backlog, keep });
      }
      if (Date.now() - this.#lastPresence < PRESENCE_MS) return;
      this.#lastPresence = Date.now();
      for (const appId of this.#byApp.keys()) await this.#renewPresence(appId);
    } catch (e) {
      log.warn("socket mode: checking connections failed", errorFields(e));
    }
  }

  #renewPresence(appId: string) {
    return this.#presence.record(appId, () => this.#byApp.get(appId)?.length ?? 0);
  }

  /** Stopping: every connection is asked to reconnect (to another instance), and closed. */
  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#poll);
    clearInterval(this.#check);
    this.#queue.stop();
    const apps = [...this.#byApp.keys()];
    for (const list of this.#byApp.values()) {
      for (const conn of list) conn.disconnect("refresh_requested");
    }
    this.#byApp.clear();
    await Promise.allSettled(apps.map((appId) => this.#renewPresence(appId)));
  }
}
