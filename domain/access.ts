import type { Channel, Subject } from "./types.ts";
import { forbidden, notFound } from "./errors.ts";

/** "Team admin or above". */
export const isAdmin = (s: Pick<Subject, "type" | "role">) =>
  s.type === "human" && (s.role === "admin" || s.role === "owner");

/**
 * Whether a subject sees a channel. A bot: only as a member. A human: as a member, or when the
 * channel is public and not a direct message. `adminOverride` is for the operations where a
 * human admin acts on a private channel of its team without being in it (archive, unarchive,
 * adding and removing members).
 */
export function canSee(
  subject: Pick<Subject, "team_id" | "type" | "role">,
  channel: Channel,
  isMember: boolean,
  adminOverride = false,
): boolean {
  if (channel.team_id !== subject.team_id) return false;
  if (isMember) return true;
  if (subject.type === "bot") return false;
  if (channel.is_direct) return false;
  return channel.visibility === "public" || (adminOverride && isAdmin(subject));
}

/** The 404 a subject gets for a channel it may not know exists. */
export const channelNotFound = () => notFound("Channel not found.");

export const archivedError = () =>
  forbidden("The channel is archived; it is read-only until it is unarchived.");

/** Archived channels take no writes: posting, editing, reacting, member changes. */
export function assertWritable(channel: Channel): void {
  if (channel.is_archived) throw archivedError();
}

/** Who may archive or unarchive: a bot only its own channels; a human its own, or an admin. */
export function assertMayArchive(subject: Subject, channel: Channel): void {
  if (channel.is_general) throw forbidden("The general channel cannot be archived.");
  if (channel.is_direct) throw forbidden("A direct message cannot be archived.");
  const creator = channel.created_by === subject.user_id;
  if (subject.type === "bot" ? !creator : !(creator || isAdmin(subject))) {
    throw forbidden("Only the channel's creator or a team admin may archive it.");
  }
}

/** Who may add members: the spec's private-channel rule; any viewer of a public channel. */
export function assertMayAddMember(subject: Subject, channel: Channel, isMember: boolean): void {
  if (channel.is_direct) throw forbidden("A direct message's members cannot change.");
  assertWritable(channel);
  if (channel.visibility === "private" && !isMember && !isAdmin(subject)) {
    throw forbidden("Only a member of this private channel or a team admin may add members.");
  }
}

/** Who may remove a member: anyone themself; others by the channel's creator or an admin. */
export function assertMayRemoveMember(subject: Subject, channel: Channel, userId: string): void {
  if (channel.is_general) {
    throw forbidden("Nobody can leave or be removed from the general channel.");
  }
  if (channel.is_direct) throw forbidden("A direct message's members cannot change.");
  assertWritable(channel);
  if (userId === subject.user_id) return;
  const creator = channel.created_by === subject.user_id;
  if (subject.type === "bot" ? !creator : !(creator || isAdmin(subject))) {
    throw forbidden("Only the channel's creator or a team admin may remove other members.");
  }
}
