/**
 * The outbox's part for Socket Mode apps: an event a Socket Mode app's listener hears is written,
 * in the event's commit, as a record pending for the app's connections (kv/apps/socket_queue.ts reads,
 * claims and acks them) instead of a delivery job.
 */
import { SLACK_ANSWER_MS } from "../../core/slack_wire.ts";
import type { SocketListener, SocketPending } from "../../core/app_records.ts";
import type { OutboxEvent } from "../../core/types.ts";
import { EVENT_TTL_MS, keys } from "../keys.ts";
import type { Heard } from "../store/plan.ts";

/**
 * Tells the instances holding the app's connections that it has work: the store-wide signal they
 * poll, and the app's own, so each reads only the apps whose signal moved.
 */
export function signalApp<Op extends { set(key: Deno.KvKey, value: unknown): Op }>(
  op: Op,
  appId: string,
): Op {
  const now = Date.now();
  return op.set(keys.socketSignal(), now).set(keys.socketAppSignal(appId), now);
}

/** How long a connection has to ack an envelope before it goes again: Slack's answer time. */
export const ACK_MS = SLACK_ANSWER_MS;

/** The listener a Socket Mode route stands for, or null for any other subscription. */
export function socketListenerOf(heard: Heard): SocketListener | null {
  const app = heard.route?.app;
  if (!app?.socket) return null;
  return {
    app_id: app.socket.app_id,
    bot_id: app.socket.bot_id,
    mention_of: app.mention_of,
    ...(app.metadata ? { metadata: true as const } : {}),
  };
}

/**
 * Adds an event for a Socket Mode app's listener to a commit: pending, or already claimed by this
 * process (attempt 1) when `claimed` says it has a connection of the app to send it on at once
 * (envelope moves "queue" and "hand"). It expires with its event (envelope move "expire").
 */
export function queueSocketEvent(
  op: Deno.AtomicOperation,
  { event, subscriptionId, listener, claimed }: {
    event: Pick<OutboxEvent, "id" | "created_at">;
    subscriptionId: string;
    listener: SocketListener;
    claimed: boolean;
  },
): SocketPending {
  const record: SocketPending = {
    listener,
    attempt: claimed ? 1 : 0,
    claim_until: claimed ? Date.now() + ACK_MS : 0,
    created_at: event.created_at,
  };
  op.set(keys.socketEvent(listener.app_id, event.id, subscriptionId), record, {
    expireIn: EVENT_TTL_MS,
  });
  op.sum(keys.socketCount(listener.app_id, "queued"), 1n);
  if (!claimed) signalApp(op, listener.app_id);
  return record;
}
