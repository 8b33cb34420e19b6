/**
 * Polls, the interface's `poll` message type (decisions.md, "Polls"): a question (the body) and
 * 2 to 10 options. Anyone who sees the channel and may react votes; without `multiple`, a vote
 * moves the voter's earlier one. The counts live on the message and change in the vote's commit,
 * which checks the message and the voter's ballot: exact however many vote at once, on however
 * many instances, as reactions are. The author or an admin closes it; a vote after is 422.
 */
import type { Ctx } from "../context.ts";
import type { MemberRef, Message, Subject } from "../../core/types.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { nowIso, storedId } from "../../core/ids.ts";
import { loadChannelWith } from "../channels/access.ts";
import { MESSAGE_LOCKS, messageIn, messageKeyFor } from "./access.ts";
import { authorize } from "../policy.ts";
import { retrying } from "../../core/retry.ts";
import { keys } from "../../kv/keys.ts";
import { replaceMessage } from "../../kv/messages.ts";
import { optionVoters } from "../../kv/polls.ts";
import type { EventDraft } from "../../kv/outbox/outbox.ts";
import { audienceOf, emit } from "../webhooks/audience.ts";
import type { MessageRef } from "./messages.ts";
import { messageEvent } from "./message_events.ts";
import { PER_PAGE } from "../paging.ts";
import type { EventData } from "../webhooks/event_schemas.ts";

/** A vote given or taken back: `present` false takes it back. */
export interface VoteChange extends MessageRef {
  optionId: string;
  present: boolean;
}

/** The poll of a message, and the option named; 404 when there is neither, saying which exist. */
function optionOf(message: Message, optionId: string) {
  const poll = message.poll;
  if (!poll) throw notFound("This message is not a poll.");
  const option = poll.options.find((o) => o.id === optionId);
  if (!option) {
    const ids = poll.options.map((o) => o.id);
    throw notFound(
      `No option ${optionId} in this poll: its options are ${ids[0]} to ${
        ids.at(-1)
      }, in the order given.`,
    );
  }
  return { poll, option };
}

const voteEvent = (
  type: "poll.vote_added" | "poll.vote_removed",
  { message, optionId, voter }: { message: Message; optionId: string; voter: MemberRef },
): EventDraft => ({
  type,
  team_id: message.team_id,
  channel_id: message.channel_id,
  data: {
    channel_id: message.channel_id,
    message_id: message.id,
    option_id: optionId,
    user: voter,
  } satisfies EventData<"poll.vote_added">,
});

/**
 * PUT and DELETE .../votes/{option}. Voting fires `poll.vote_added` (and `poll.vote_removed` for
 * the vote it moves) in the same commit; a repeat on either side writes nothing.
 */
export async function setVote(ctx: Ctx, subject: Subject, change: VoteChange): Promise<void> {
  await ctx.kv.lock(MESSAGE_LOCKS).run(
    change.messageId,
    () => retrying("vote", () => voteOnce(ctx, subject, change)),
  );
}

async function voteOnce(ctx: Ctx, subject: Subject, change: VoteChange): Promise<true | null> {
  const { channelId, messageId, optionId, present } = change;
  const stored = storedId(messageId);
  const read = await loadChannelWith<{ message: Message; ballot: string[] }>(
    ctx,
    subject,
    channelId,
    {
      extra: {
        message: messageKeyFor(messageId),
        ballot: stored ? keys.pollBallot(stored, subject.user_id) : null,
      },
      audience: true,
    },
  );
  const entry = messageIn(read.channel, read.extra.message);
  authorize(subject, "reaction.set", read);
  const message = entry.value;
  const { poll } = optionOf(message, optionId);
  if (poll.closed_at) throw invalid("poll", "The poll is closed.");
  const ballotEntry = read.extra.ballot;
  const ballot = ballotEntry.value ?? [];
  if (ballot.includes(optionId) === present) return true;
  const removed = present ? (poll.multiple ? [] : ballot) : [optionId];
  const added = present ? [optionId] : [];
  const kept = ballot.filter((id) => !removed.includes(id));
  const counted = (id: string) => (added.includes(id) ? 1 : 0) - (removed.includes(id) ? 1 : 0);
  const options = poll.options.map((o) => ({ ...o, count: o.count + counted(o.id) }));
  const next: Message = { ...message, poll: { ...poll, options } };
  const audience = await audienceOf(ctx, read.channel, read.versions);
  const op = ctx.kv.atomic().check(entry, read.entry, ballotEntry, ...audience.checks);
  const voter: MemberRef = { id: subject.user_id, name: subject.name, type: subject.type };
  for (const id of removed) {
    op.delete(keys.pollVote(message.id, id, voter.id));
    emit(op, audience, voteEvent("poll.vote_removed", { message, optionId: id, voter }));
  }
  for (const id of added) {
    op.set(keys.pollVote(message.id, id, voter.id), voter);
    emit(op, audience, voteEvent("poll.vote_added", { message, optionId: id, voter }));
  }
  const ballotKey = keys.pollBallot(message.id, voter.id);
  if (kept.length + added.length > 0) op.set(ballotKey, [...kept, ...added]);
  else op.delete(ballotKey);
  return (await replaceMessage(op, next)) || null;
}

const voterCursorData = (ref: MessageRef & { optionId: string }, userId: string) =>
  `voters|${ref.messageId}|${ref.optionId}|${userId}`;

const VOTER_CURSOR = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{1,64})$/;

/** GET .../votes/{option}: who chose it, 50 to a page, by user id; `cursor` goes on. */
export async function listVoters(
  ctx: Ctx,
  subject: Subject,
  ref: MessageRef & { optionId: string; cursor?: string },
): Promise<{ voters: MemberRef[]; nextCursor: string | null }> {
  const read = await loadChannelWith<{ message: Message }>(ctx, subject, ref.channelId, {
    extra: { message: messageKeyFor(ref.messageId) },
  });
  const message = messageIn(read.channel, read.extra.message).value;
  optionOf(message, ref.optionId);
  let after: string | null = null;
  if (ref.cursor) {
    const m = VOTER_CURSOR.exec(ref.cursor);
    if (!m || !ctx.keyring.verify(voterCursorData(ref, m[1]), m[2])) {
      throw invalid("cursor", "The cursor is not valid for this list; start again without it.");
    }
    after = m[1];
  }
  const page = await optionVoters(ctx.kv, {
    messageId: message.id,
    optionId: ref.optionId,
    afterUserId: after,
    limit: PER_PAGE + 1,
  });
  const voters = page.slice(0, PER_PAGE);
  const last = voters.at(-1);
  const nextCursor = page.length > PER_PAGE && last
    ? `${last.id}.${ctx.keyring.sign(voterCursorData(ref, last.id))}`
    : null;
  return { voters, nextCursor };
}

/**
 * POST .../close: the author or an admin ends the voting and fires `poll.closed` with the
 * message; closing a closed poll changes nothing.
 */
export async function closePoll(ctx: Ctx, subject: Subject, ref: MessageRef): Promise<Message> {
  return await ctx.kv.lock(MESSAGE_LOCKS).run(
    ref.messageId,
    () => retrying("close poll", () => closeOnce(ctx, subject, ref)),
  );
}

async function closeOnce(ctx: Ctx, subject: Subject, ref: MessageRef): Promise<Message | null> {
  const read = await loadChannelWith<{ message: Message }>(ctx, subject, ref.channelId, {
    extra: { message: messageKeyFor(ref.messageId) },
    audience: true,
  });
  const entry = messageIn(read.channel, read.extra.message);
  const message = entry.value;
  if (!message.poll) throw notFound("This message is not a poll.");
  authorize(subject, "poll.close", { channel: read.channel, isMember: read.isMember, message });
  if (message.poll.closed_at) return message;
  const next: Message = { ...message, poll: { ...message.poll, closed_at: nowIso() } };
  const audience = await audienceOf(ctx, read.channel, read.versions);
  const op = ctx.kv.atomic().check(entry, read.entry, ...audience.checks);
  emit(op, audience, messageEvent("poll.closed", next));
  return (await replaceMessage(op, next)) ? next : null;
}
