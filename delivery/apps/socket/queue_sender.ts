/**
 * Sends a Socket Mode app's waiting events (kv/apps/socket_queue.ts) to its connections here: oldest
 * first, each claimed before it goes so no connection elsewhere sends it too, again after 3 s
 * unacked (another connection when there is one, with `retry_attempt` and `retry_reason`). One
 * read of an app's queue at a time; reasons to read it again meanwhile coalesce.
 */
import { socketEnvelope } from "../../../core/slack_wire.ts";
import type { Ctx } from "../../../domain/context.ts";
import type { SocketPending } from "../../../core/app_records.ts";
import type { OutboxEvent } from "../../../core/types.ts";
import { errorFields, log } from "../../../core/log.ts";
import { keys } from "../../../kv/keys.ts";
import type { QueuedSocket } from "../../../kv/store/plan.ts";
import {
  ackPending,
  claimPending,
  envelopeIdOf,
  type Pending,
  pendingOf,
  releasePending,
} from "../../../kv/apps/socket_queue.ts";
import { eventCallbackOf } from "../../../domain/slack/event_callback.ts";
import type { SocketConnection } from "./connection.ts";

/** Events read from an app's queue at a time: also how many may be in flight at once. */
const WINDOW = 100;

/** One of the app's open connections here, another than `avoid` when there is one. */
export type Picker = (appId: string, avoid: string | null) => SocketConnection | null;

/** Per app: whether its queue is being read, read again, or known empty of unclaimed events. */
interface AppQueue {
  running: boolean;
  again: boolean;
  drained: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer reads the queue again: the first claim in flight to run out. */
  wakeAt: number;
  /** The connection each envelope in flight went to, so a retry goes elsewhere. */
  sentTo: Map<string, string>;
}

export class QueueSender {
  readonly #apps = new Map<string, AppQueue>();

  constructor(private readonly ctx: Ctx, private readonly pick: Picker) {}

  /** Whether the app's queue was last found with nothing unclaimed: new events may go at once. */
  drained(appId: string): boolean {
    return this.#apps.get(appId)?.drained ?? false;
  }

  /** An event this process claimed in its commit: sent now, or let go for any connection. */
  sendClaimed({ record, ...s }: QueuedSocket, event: OutboxEvent): void {
    const conn = this.pick(s.appId, null);
    const sent = conn ? this.#send(conn, { ...s, record, event }) : Promise.resolve(false);
    void sent.then(async (ok) => {
      // Sent on its post's own commit: unacked when its claim runs out, it goes again.
      if (ok) return this.#wakeAt(s.appId, record.claim_until);
      await releasePending(this.ctx.kv, s.appId, envelopeIdOf(s));
      this.read(s.appId);
    }).catch((e) => log.warn("socket mode: sending an event failed", errorFields(e)));
  }

  /** An ack of one of the app's events: it is no longer pending, and the next may go. */
  async acked(appId: string, envelopeId: string): Promise<void> {
    this.#apps.get(appId)?.sentTo.delete(envelopeId);
    if (await ackPending(this.ctx.kv, appId, envelopeId)) this.read(appId);
  }

  /** A connection closed: what it held unacked goes at once, not after its 3 s. */
  closed(appId: string, conn: SocketConnection, last: boolean): void {
    const queue = this.#apps.get(appId);
    if (!queue) return;
    for (const [envelopeId, connId] of queue.sentTo) {
      if (connId !== conn.id) continue;
      queue.sentTo.delete(envelopeId);
      releasePending(this.ctx.kv, appId, envelopeId).catch(() => {});
    }
    if (!last) return this.read(appId);
    clearTimeout(queue.timer);
    this.#apps.delete(appId);
  }

  /** Reads the app's queue and sends what is due. */
  read(appId: string): void {
    let queue = this.#apps.get(appId);
    if (!queue) {
      queue = {
        running: false,
        again: false,
        drained: false,
        timer: undefined,
        wakeAt: Infinity,
        sentTo: new Map(),
      };
      this.#apps.set(appId, queue);
    }
    if (queue.running) {
      queue.again = true;
      return;
    }
    queue.running = true;
    const q = queue;
    this.#rounds(appId, q).catch((e) =>
      log.warn("socket mode: reading an app's events failed", { app_id: appId, ...errorFields(e) })
    ).finally(() => {
      q.running = false;
      if (q.again && this.#apps.get(appId) === q) this.read(appId);
    });
  }

  async #rounds(appId: string, queue: AppQueue) {
    do {
      queue.again = false;
      if (this.#apps.get(appId) !== queue) return;
      const { due, next } = await this.#round(appId, queue);
      queue.drained = due === 0;
      clearTimeout(queue.timer);
      queue.wakeAt = Infinity;
      this.#wakeAt(appId, next);
    } while (queue.again);
  }

  /** Reads the app's queue again at `at` (a claim running out), unless a read is due sooner. */
  #wakeAt(appId: string, at: number): void {
    const queue = this.#apps.get(appId);
    if (!queue || !Number.isFinite(at) || queue.wakeAt <= at) return;
    clearTimeout(queue.timer);
    queue.wakeAt = at;
    queue.timer = setTimeout(() => {
      queue.wakeAt = Infinity;
      this.read(appId);
    }, Math.max(0, at - Date.now()) + 5);
  }

  /** One read: sends what is unclaimed; says how many were and when the next claim runs out. */
  async #round(appId: string, queue: AppQueue): Promise<{ due: number; next: number }> {
    const now = Date.now();
    let [next, due] = [Infinity, 0];
    for (const p of await pendingOf(this.ctx.kv, appId, WINDOW)) {
      const held = p.entry.value.claim_until;
      // A claim that ran out unacked is queued again (envelope move "lapse").
      if (held > now) {
        next = Math.min(next, held);
        continue;
      }
      due++;
      const conn = this.pick(appId, queue.sentTo.get(envelopeIdOf(p)) ?? null);
      if (!conn) break;
      const record = await claimPending(this.ctx.kv, p);
      if (!record) continue;
      const event = (await this.ctx.kv.get<OutboxEvent>(keys.event(p.eventId))).value;
      if (!event) {
        // Past the 30-day horizon: nothing to send.
        await ackPending(this.ctx.kv, appId, envelopeIdOf(p));
        continue;
      }
      if (await this.#send(conn, { ...p, record, event })) {
        next = Math.min(next, record.claim_until);
      } else await releasePending(this.ctx.kv, appId, envelopeIdOf(p));
    }
    return { due, next };
  }

  /** Sends an `events_api` envelope; its retries say which attempt and why. */
  async #send(
    conn: SocketConnection,
    { record, event, ...p }: Omit<Pending, "entry"> & { record: SocketPending; event: OutboxEvent },
  ): Promise<boolean> {
    const envelopeId = envelopeIdOf(p);
    const payload = await eventCallbackOf(this.ctx.kv, { event, listener: record.listener });
    const sent = conn.send(socketEnvelope({
      envelopeId,
      type: "events_api",
      payload,
      answers: false,
      retry: { attempt: record.attempt - 1, reason: "timeout" },
    }));
    if (sent) {
      conn.holds(envelopeId);
      this.#apps.get(p.appId)?.sentTo.set(envelopeId, conn.id);
    }
    return sent;
  }

  stop(): void {
    for (const queue of this.#apps.values()) clearTimeout(queue.timer);
    this.#apps.clear();
  }
}
