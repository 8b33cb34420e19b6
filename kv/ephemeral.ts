/**
 * Messages for one person only (decisions.md, "Ephemeral messages"), relayed to whichever
 * instance holds that person's open streams: each is written under its team for a minute, with
 * the team's notices version, which every instance with open streams of the team polls. They are
 * never part of the timeline, the feed, webhooks or exports (the prefix is `local`), and what
 * they say is sealed with a key derived from APP_KEY, so the store's file never holds it in the
 * clear (backups also leave the prefix out: kv/store/store_file.ts).
 */
import { newId } from "../core/ids.ts";
import type { Keyring } from "../core/keyring.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store/store.ts";
import type { Plan } from "./store/plan.ts";

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

/** A notice as the store holds it: whom it is for in the clear, what it says sealed. */
interface SealedNotice extends Omit<PersonalNotice, "data"> {
  sealed: string;
}

/** Relays a notice to every instance; returns it with its id (made here, in time order). */
export async function relayNotice(
  { kv, keyring }: { kv: Store; keyring: Keyring },
  teamId: string,
  notice: Omit<PersonalNotice, "id">,
): Promise<PersonalNotice> {
  const made = { id: newId(), ...notice };
  const op = kv.atomic();
  planNotice(op, teamId, await sealNotice(keyring, made));
  await op.commit();
  return made;
}

/** A notice sealed as the store keeps it, for `planNotice` to add to a commit of its own. */
export async function sealNotice(keyring: Keyring, notice: PersonalNotice): Promise<SealedNotice> {
  const { data, ...whom } = notice;
  return { ...whom, sealed: await keyring.encrypt(JSON.stringify(data)) };
}

/** Relays a sealed notice in `op`'s commit: the change it tells of and its telling, at once. */
export function planNotice(op: Plan, teamId: string, sealed: SealedNotice): void {
  op.set(keys.sealedNotice(teamId, sealed.id), sealed, { expireIn: RELAY_MS })
    .set(keys.noticesVersion(teamId), sealed.id, { expireIn: RELAY_MS });
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

/**
 * The team's notices relayed after `afterId` (every one still kept, when null), oldest first.
 * Read from both prefixes: 0.31.0, beside this release in a rolling deploy, relays them unsealed.
 */
export async function noticesAfter(
  { kv, keyring }: { kv: Store; keyring: Keyring },
  teamId: string,
  afterId: string | null,
): Promise<PersonalNotice[]> {
  const out: PersonalNotice[] = [];
  for await (const e of kv.list<SealedNotice>(after(keys.sealedNotices(teamId), afterId))) {
    const { sealed, ...whom } = e.value;
    out.push({ ...whom, data: JSON.parse(await keyring.decrypt(sealed)) });
  }
  for await (const e of kv.list<PersonalNotice>(after(keys.notices(teamId), afterId))) {
    out.push(e.value);
  }
  return out.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

const after = (prefix: Deno.KvKey, afterId: string | null) =>
  afterId ? { start: [...prefix, afterId, ""], end: [...prefix, "~"] } : { prefix };
