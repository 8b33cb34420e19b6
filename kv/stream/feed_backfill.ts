/**
 * Layout step 2 of 2 for the event feed's indexes by reader (kv/keys.ts): releases of layout 2
 * write them with every event and membership; this fills them for what older releases wrote,
 * once, before a release that reads them serves. Every write is a plain set of what the
 * primary records say, so processes starting together may all run it.
 */
import type { Channel, EventType } from "../../core/types.ts";
import { idTime } from "../../core/ids.ts";
import { chunks } from "../../core/chunks.ts";
import { commitInBatches, getAll } from "../store/commit.ts";
import { EVENT_TTL_MS, keys } from "../keys.ts";
import { isClosed } from "../../core/channel_kind.ts";
import type { Store } from "../store/store.ts";
import type { Plan } from "../store/plan.ts";

/** Index entries a commit writes: two mutations each, well inside every commit limit. */
const PER_COMMIT = 250;

export async function backfillFeedIndexes(kv: Store): Promise<void> {
  await indexClosedMemberships(kv);
  await indexTeamEvents(kv);
}

/**
 * Each membership of a private or direct channel, indexed by its user. A membership ended
 * meanwhile is not brought back: each commit checks the memberships it indexes.
 */
async function indexClosedMemberships(kv: Store) {
  for await (const c of kv.list<Channel>({ prefix: keys.channels() }, { batchSize: 500 })) {
    if (!isClosed(c.value)) continue;
    const members = await Array.fromAsync(kv.list({ prefix: keys.members(c.value.id) }));
    for (const group of chunks(members, 10)) {
      const op = kv.atomic();
      for (const m of group) {
        op.check(m).set(keys.userClosedChannel(m.key[2] as string, c.value.id), null);
      }
      await op.commit();
    }
  }
}

interface TeamEvent {
  teamId: string;
  id: string;
  type: EventType;
  channelId: string;
}

/** Every event the feed still keeps, indexed by its channel, and by its team where all see it. */
async function indexTeamEvents(kv: Store) {
  const open = new Map<string, boolean>();
  let batch: TeamEvent[] = [];
  const flush = async () => {
    const unknown = [...new Set(batch.map((e) => e.channelId))].filter((id) => !open.has(id));
    const channels = await getAll<Channel>(kv, unknown.map((id) => keys.channel(id)));
    unknown.forEach((id, i) =>
      open.set(id, channels[i].value ? !isClosed(channels[i].value) : false)
    );
    await commitInBatches(
      kv,
      batch,
      PER_COMMIT,
      (op, e) => indexEvent(op, e, open.get(e.channelId)!),
    );
    batch = [];
  };
  const entries = kv.list<{ type: EventType; channel_id: string }>(
    { prefix: keys.allTeamEvents() },
    { batchSize: 500 },
  );
  for await (const e of entries) {
    const [, teamId, id] = e.key as [string, string, string];
    if (idTime(id) + EVENT_TTL_MS <= Date.now()) continue;
    batch.push({ teamId, id, type: e.value.type, channelId: e.value.channel_id });
    if (batch.length === 500) await flush();
  }
  await flush();
}

function indexEvent(op: Plan, e: TeamEvent, open: boolean) {
  const kept = { expireIn: Math.max(1, idTime(e.id) + EVENT_TTL_MS - Date.now()) };
  op.set(keys.channelEvent(e.channelId, e.id), { type: e.type }, kept);
  if (open) op.set(keys.openEvent(e.teamId, e.id), { type: e.type, channel_id: e.channelId }, kept);
}
