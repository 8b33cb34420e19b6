import type { Ctx } from "./context.ts";
import type { Channel, MemberRef, Message, Subject } from "./types.ts";
import { canSee, channelNotFound } from "./access.ts";
import type { ChannelAccess } from "./channels.ts";
import { notFound } from "./errors.ts";
import { isUuid } from "./ids.ts";
import { keys } from "../kv/keys.ts";
import { KeyedLock } from "../kv/positions.ts";

/**
 * Changes to one message (edit, delete, reactions) queue up in this process instead of racing
 * each other's versionstamp checks: a popular message gets many reactions at once, and
 * optimistic retries alone would starve some of them. Other processes still meet the checks.
 */
export const messageLocks = new KeyedLock();

export interface ChannelRead<T extends unknown[]> extends ChannelAccess {
  /** The subject's membership entry as read, to re-check at commit. */
  member: Deno.KvEntryMaybe<MemberRef>;
  extra: { [K in keyof T]: Deno.KvEntryMaybe<T[K]> };
}

const absent = { key: [], value: null, versionstamp: null };

/**
 * `loadChannel`'s visibility rule (no admin override: reading and posting need normal
 * visibility) with up to 8 more keys fetched in the same `getMany`, so a request's
 * preconditions cost one round trip. A null key (nothing to read) yields an absent entry in its
 * place. Throws the 404 that hides a channel.
 */
export async function loadChannelWith<T extends unknown[]>(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  extraKeys: (Deno.KvKey | null)[],
): Promise<ChannelRead<T>> {
  if (!isUuid(channelId)) throw channelNotFound();
  const wanted = extraKeys.filter((k) => k !== null);
  const [channel, member, ...read] = await ctx.kv.getMany<[Channel, MemberRef, ...unknown[]]>([
    keys.channel(channelId),
    keys.member(channelId, subject.user_id),
    ...wanted,
  ]);
  const extra = extraKeys.map((k) => k === null ? absent : read.shift());
  if (channel.versionstamp === null) throw channelNotFound();
  const isMember = member.versionstamp !== null;
  if (!canSee(subject, channel.value, isMember)) throw channelNotFound();
  return {
    entry: channel,
    channel: channel.value,
    isMember,
    member: member as Deno.KvEntryMaybe<MemberRef>,
    extra: extra as ChannelRead<T>["extra"],
  };
}

/** The key of the message an id names, or null when the id can't name one (not a uuid). */
export const messageKeyFor = (id: string | null | undefined) =>
  id && isUuid(id) ? keys.message(id) : null;

/** The message entry when it exists in this channel; else the 404 (other channels included). */
export function messageIn(
  channel: Channel,
  entry: Deno.KvEntryMaybe<Message> | undefined,
): Deno.KvEntry<Message> {
  if (!entry?.value || entry.value.channel_id !== channel.id) {
    throw notFound("Message not found.");
  }
  return entry as Deno.KvEntry<Message>;
}
