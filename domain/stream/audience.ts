/**
 * Which events of a round each open stream gets: its filters (types, channels), and whether its
 * user may read the event's channel now (the policy's "event.hear", as a subscription of that
 * user would hear it). Channels and memberships are read once a round for all streams, under
 * each channel's members version, so a member taken out of a channel gets nothing more of it
 * from the next event on, in every process.
 */
import type { Ctx } from "../context.ts";
import { CacheKind } from "../../core/memory.ts";
import type { Channel, EventType, Subject } from "../../core/types.ts";
import { getAll } from "../../kv/store/commit.ts";
import { keys } from "../../kv/keys.ts";
import { membersAt } from "../../kv/roster.ts";
import type { LoggedEvent } from "../../kv/stream/stream_markers.ts";
import { permits } from "../policy.ts";

/** What a stream asked for. */
export interface StreamFilter {
  types: EventType[] | null;
  channelIds: string[] | null;
}

/** What never changes about a channel: who may read it depends on it and on membership. */
const CHANNELS = new CacheKind<Channel>("channels heard", 50_000);

const wants = (f: StreamFilter, e: LoggedEvent) =>
  (!f.types || (f.types as string[]).includes(e.type)) &&
  (!f.channelIds || f.channelIds.includes(e.channel_id));

const NONE: readonly number[] = Object.freeze([]);

/** The indexes of `events` the filter takes; runs for every open stream each round. */
function takenBy(filter: StreamFilter, events: LoggedEvent[]): number[] {
  let out: number[] | undefined;
  for (let i = 0; i < events.length; i++) {
    if (wants(filter, events[i])) (out ??= []).push(i);
  }
  return out ?? NONE as number[];
}

/**
 * For each reader (a subject and its filter), the indexes of `events` it gets. Reads, for the
 * channels some reader's filter takes: those not seen before, each one's members version, and
 * memberships not known under it. A round no filter takes anything of reads nothing.
 */
export async function selectFor(
  ctx: Ctx,
  events: LoggedEvent[],
  readers: { subject: Subject; filter: StreamFilter }[],
): Promise<number[][]> {
  const taken = readers.map(({ filter }) => takenBy(filter, events));
  const wanted = new Set<string>();
  for (const indexes of taken) for (const i of indexes) wanted.add(events[i].channel_id);
  const channelIds = [...wanted];
  if (channelIds.length === 0) return taken;
  const channels = ctx.kv.cache(CHANNELS);
  const unknown = channelIds.filter((id) => !channels.has(id));
  for (const entry of await getAll<Channel>(ctx.kv, unknown.map((id) => keys.channel(id)))) {
    if (entry.value) channels.set(entry.value.id, entry.value);
  }
  const versions = await getAll(ctx.kv, channelIds.map((id) => keys.membersVersion(id)));
  const members = new Map<string, Set<string>>();
  await Promise.all(channelIds.map(async (id, i) => {
    const channel = channels.get(id);
    if (!channel) return;
    // Only those whom membership decides are asked (a human reads a public channel anyway).
    const asked = readers.filter((r, n) =>
      taken[n].some((e) => events[e].channel_id === id) &&
      !permits(r.subject, "event.hear", { channel, isMember: false })
    ).map((r) => r.subject.user_id);
    members.set(id, asked.length ? await membersAt(ctx.kv, id, versions[i], asked) : new Set());
  }));
  return readers.map(({ subject }, n) =>
    taken[n].filter((i) => {
      const channel = channels.get(events[i].channel_id);
      const isMember = members.get(events[i].channel_id)?.has(subject.user_id) ?? false;
      return channel !== undefined && permits(subject, "event.hear", { channel, isMember });
    })
  );
}
