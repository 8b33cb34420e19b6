/**
 * Messages for one person only (decisions.md, "Ephemeral messages"), relayed to whichever
 * instance holds that person's open streams: each is written under its team for a minute, with
 * the team's notices version, which every instance with open streams of the team polls. They are
 * never part of the timeline, the feed, webhooks or exports (the prefix is `local`).
 */
import { newId } from "../core/ids.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store.ts";

/** How long a notice waits for the instances that poll for it: well past their 20 ms. */
const RELAY_MS = 60_000;

/** A notice for one person's open streams: an ephemeral message, a view opened for them. */
export interface PersonalNotice {
  id: string;
  user_id: string;
  channel_id: string | null;
  /** The stream event's type (`message.ephemeral`, `view.opened`). */
  type: string;
  data: unknown;
}

/** Relays a notice to every instance; returns it with its id (made here, in time order). */
export async function relayNotice(
  kv: Store,
  teamId: string,
  notice: Omit<PersonalNotice, "id">,
): Promise<PersonalNotice> {
  const stored = { id: newId(), ...notice };
  await kv.atomic()
    .set(keys.notice(teamId, stored.id), stored, { expireIn: RELAY_MS })
    .set(keys.noticesVersion(teamId), stored.id, { expireIn: RELAY_MS })
    .commit();
  return stored;
}

/** The teams' notices versions: the id of the last notice relayed in each (null: none lately). */
export async function noticesVersions(kv: Store, teamIds: string[]) {
  const out = new Map<string, string | null>();
  for (let i = 0; i < teamIds.length; i += 10) {
    const part = teamIds.slice(i, i + 10);
    const read = await kv.getMany<string[]>(part.map((t) => keys.noticesVersion(t)));
    part.forEach((t, j) => out.set(t, (read[j].value as string | null) ?? null));
  }
  return out;
}

/** The team's notices relayed after `afterId` (every one still kept, when null), oldest first. */
export async function noticesAfter(
  kv: Store,
  teamId: string,
  afterId: string | null,
): Promise<PersonalNotice[]> {
  const prefix = keys.notices(teamId);
  const selector = afterId
    ? { start: [...prefix, afterId, ""], end: [...prefix, "~"] }
    : { prefix };
  const out: PersonalNotice[] = [];
  for await (const e of kv.list<PersonalNotice>(selector)) out.push(e.value);
  return out;
}
