/**
 * Events waiting for Socket Mode apps (decisions.md, "Apps without a public URL"): one record per
 * event and listener, written in the event's commit (the outbox), keyed by app and event id, so an
 * app's events are read oldest first; each stays until a connection acks its envelope. Sending one
 * claims it for ACK_MS, so two connections (on any instances) never hold the same envelope at once.
 */
import type { SocketPending } from "../../core/app_records.ts";
import { EVENT_TTL_MS, keys } from "../keys.ts";
import { ACK_MS, signalApp } from "./socket_outbox.ts";
import type { Store } from "../store/store.ts";
import { getAll } from "../store/commit.ts";
import { chunks } from "../../core/chunks.ts";

/** A pending event as read: its key's parts and its record. */
export interface Pending {
  appId: string;
  eventId: string;
  subscriptionId: string;
  entry: Deno.KvEntry<SocketPending>;
}

/** The envelope id of a pending event: the same on every attempt, and names its record. */
export const envelopeIdOf = (p: Pick<Pending, "eventId" | "subscriptionId">) =>
  `${p.eventId}_${p.subscriptionId}`;

/** The app's pending events, oldest first, at most `limit`. */
export async function pendingOf(kv: Store, appId: string, limit: number): Promise<Pending[]> {
  const out: Pending[] = [];
  for await (
    const entry of kv.list<SocketPending>({ prefix: keys.socketEvents(appId) }, { limit })
  ) {
    out.push({
      appId,
      eventId: entry.key[2] as string,
      subscriptionId: entry.key[3] as string,
      entry,
    });
  }
  return out;
}

/**
 * Claims a pending event for one more attempt, unless it changed since it was read (another
 * connection took it, or it was acked): the claimed record, or null (envelope move "claim").
 */
export async function claimPending(kv: Store, p: Pending): Promise<SocketPending | null> {
  const next: SocketPending = {
    ...p.entry.value,
    attempt: p.entry.value.attempt + 1,
    claim_until: Date.now() + ACK_MS,
  };
  const res = await kv.atomic().check(p.entry).set(p.entry.key, next, { expireIn: EVENT_TTL_MS })
    .commit();
  return res.ok ? next : null;
}

/** The record an envelope id names, or null for one that names none of this app's. */
export function pendingKey(appId: string, envelopeId: string): Deno.KvKey | null {
  const m = /^([0-9a-f-]{36})_([0-9a-f-]{36})$/.exec(envelopeId);
  return m ? keys.socketEvent(appId, m[1], m[2]) : null;
}

/**
 * An envelope acked: its event is no longer pending, whichever connection had it (envelope move
 * "ack").
 */
export async function ackPending(kv: Store, appId: string, envelopeId: string): Promise<boolean> {
  const key = pendingKey(appId, envelopeId);
  if (!key) return false;
  for (let tries = 0; tries < 5; tries++) {
    const entry = await kv.get<SocketPending>(key);
    if (!entry.value) return false;
    const res = await kv.atomic().check(entry).delete(key)
      .sum(keys.socketCount(appId, "acked"), 1n).commit();
    if (res.ok) return true;
  }
  return false;
}

/** Lets a claimed event go at once: its connection closed before the ack (envelope move "release"). */
export async function releasePending(kv: Store, appId: string, envelopeId: string) {
  const key = pendingKey(appId, envelopeId);
  if (!key) return;
  const entry = await kv.get<SocketPending>(key);
  if (!entry.value || entry.value.claim_until === 0) return;
  const op = kv.atomic().check(entry).set(key, { ...entry.value, claim_until: 0 }, {
    expireIn: EVENT_TTL_MS,
  });
  await signalApp(op, appId).commit();
}

const COUNTS = ["queued", "acked", "dropped"] as const;

/** Apps' envelopes counted: queued, acked and dropped ever, and so their backlogs; in one read. */
export async function socketCountsOf(kv: Store, appIds: string[]) {
  const entries = await getAll<Deno.KvU64>(
    kv,
    appIds.flatMap((a) => COUNTS.map((kind) => keys.socketCount(a, kind))),
  );
  const n = (i: number) => Number(entries[i].value?.value ?? 0n);
  return new Map(appIds.map((appId, i) => {
    const [queued, acked, dropped] = [n(3 * i), n(3 * i + 1), n(3 * i + 2)];
    return [appId, { queued, acked, dropped, backlog: Math.max(0, queued - acked - dropped) }];
  }));
}

/** The app's envelopes counted: queued, acked and dropped ever, and so its backlog. */
export const socketCounts = async (kv: Store, appId: string) =>
  (await socketCountsOf(kv, [appId])).get(appId)!;

/**
 * Drops the app's oldest pending events past `keep` (SOCKET_MODE_BACKLOG), counted, given its
 * `backlog` now (envelope move "drop"): returns how many went. Events whose record expired (the 30-day horizon) are
 * counted by the next trim.
 */
export async function trimPending(
  kv: Store,
  { appId, backlog, keep }: { appId: string; backlog: number; keep: number },
): Promise<number> {
  const over = backlog - keep;
  if (over <= 0) return 0;
  let dropped = 0;
  for (const p of await pendingOf(kv, appId, Math.min(over, 500))) {
    const res = await kv.atomic().check(p.entry).delete(p.entry.key)
      .sum(keys.socketCount(appId, "dropped"), 1n).commit();
    if (res.ok) dropped++;
  }
  return dropped;
}

/** The signal's versionstamp: a change means some commit queued events for Socket Mode apps. */
export async function socketSignal(kv: Store): Promise<string | null> {
  return (await kv.get(keys.socketSignal())).versionstamp;
}

/** Each app's own signal's versionstamp: which of them have work since last looked. */
export async function appSignals(kv: Store, appIds: string[]): Promise<Map<string, string | null>> {
  const entries = await getAll(kv, appIds.map((a) => keys.socketAppSignal(a)));
  return new Map(entries.map((e) => [e.key[1] as string, e.versionstamp]));
}

/**
 * Drops the app's pending events that `listenerIds` heard (an install's, as it goes), counted
 * dropped; with `closeLinks`, marks the app's connections opened until now for closing on every
 * instance. The last commit moves the app's signal, so every instance holding its connections
 * looks at once. Returns how many were dropped.
 */
export async function dropBacklog(
  kv: Store,
  { appId, listenerIds, closeLinks }: { appId: string; listenerIds: string[]; closeLinks: boolean },
): Promise<number> {
  const listeners = new Set(listenerIds);
  const doomed: Deno.KvEntry<SocketPending>[] = [];
  for await (const e of kv.list<SocketPending>({ prefix: keys.socketEvents(appId) })) {
    if (listeners.has(e.key[3] as string)) doomed.push(e);
  }
  let dropped = 0;
  for (const part of chunks(doomed, kv.maxChecks)) dropped += await dropEntries(kv, appId, part);
  const op = kv.atomic();
  if (closeLinks) op.set(keys.socketLinksClosed(appId), Date.now());
  await signalApp(op, appId).commit();
  return dropped;
}

/** Deletes pending records as read, counted dropped; one acked meanwhile is left to its ack. */
async function dropEntries(kv: Store, appId: string, entries: Deno.KvEntry<SocketPending>[]) {
  const drop = (part: Deno.KvEntry<SocketPending>[]) => {
    const op = kv.atomic();
    for (const e of part) op.check(e).delete(e.key);
    return op.sum(keys.socketCount(appId, "dropped"), BigInt(part.length)).commit();
  };
  if ((await drop(entries)).ok) return entries.length;
  let dropped = 0;
  for (const e of entries) if ((await drop([e])).ok) dropped++;
  return dropped;
}

/** When each app's connections were last closed for good (its last install went), if ever. */
export async function linksClosedOf(kv: Store, appIds: string[]): Promise<Map<string, number>> {
  const entries = await getAll<number>(kv, appIds.map((a) => keys.socketLinksClosed(a)));
  return new Map(entries.flatMap((e) => e.value === null ? [] : [[e.key[1] as string, e.value]]));
}
