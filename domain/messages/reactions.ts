import type { Ctx } from "../context.ts";
import type { Message, ReactionSummary, Subject } from "../../core/types.ts";
import { type Emoji, parseEmoji, unknownCustomEmoji } from "./emoji.ts";
import { invalid } from "../../core/errors.ts";
import { storedId } from "../../core/ids.ts";
import { loadChannelWith } from "../channels/access.ts";
import { MESSAGE_LOCKS, messageIn, messageKeyFor } from "./access.ts";
import { isSystem } from "./draft.ts";
import { authorize } from "../policy.ts";
import { attempt, peek, type Settled, unwrap } from "../../core/settled.ts";
import { retrying } from "../../core/retry.ts";
import { keys } from "../../kv/keys.ts";
import { replaceMessage } from "../../kv/messages.ts";
import type { EventDraft } from "../../kv/outbox/outbox.ts";
import { audienceOf, emit, NOBODY } from "../webhooks/audience.ts";
import type { EventData } from "../webhooks/event_schemas.ts";

/**
 * Distinct emoji one message may carry. Bounds the summary stored on every copy of the message
 * (its value must stay under KV's 64 KiB beside a 10,000-character body).
 */
export const MAX_DISTINCT_EMOJI = 50;

function withAdded(summary: ReactionSummary[], emoji: string): ReactionSummary[] {
  if (summary.some((r) => r.emoji === emoji)) {
    return summary.map((r) => r.emoji === emoji ? { emoji, count: r.count + 1 } : r);
  }
  if (summary.length >= MAX_DISTINCT_EMOJI) {
    throw invalid("emoji", `A message can carry at most ${MAX_DISTINCT_EMOJI} different emoji.`);
  }
  return [...summary, { emoji, count: 1 }];
}

const withRemoved = (summary: ReactionSummary[], emoji: string): ReactionSummary[] =>
  summary.flatMap((r) =>
    r.emoji !== emoji ? [r] : r.count > 1 ? [{ emoji, count: r.count - 1 }] : []
  );

const reactionAdded = (m: Message, emoji: string, s: Subject): EventDraft => ({
  type: "reaction.added",
  team_id: m.team_id,
  channel_id: m.channel_id,
  data: {
    channel_id: m.channel_id,
    message_id: m.id,
    emoji,
    user: { id: s.user_id, name: s.name, type: s.type },
  } satisfies EventData<"reaction.added">,
});

/**
 * PUT and DELETE .../reactions/{emoji}, `segment` being the path segment still percent-encoded.
 * Adding fires `reaction.added` in the same commit; a repeat on either side writes nothing.
 */
export async function setReaction(
  ctx: Ctx,
  subject: Subject,
  { channelId, messageId, segment, present }: ReactionChange & { segment: string },
): Promise<void> {
  const emoji = attempt(() => parseEmoji(segment));
  const change = { channelId, messageId, present };
  await ctx.kv.lock(MESSAGE_LOCKS).run(
    messageId,
    () => retrying("reaction", () => reactOnce(ctx, subject, change, emoji)),
  );
}

/** A reaction set or cleared: `present` false clears it. */
export interface ReactionChange {
  channelId: string;
  messageId: string;
  present: boolean;
}

async function reactOnce(
  ctx: Ctx,
  subject: Subject,
  { channelId, messageId, present }: ReactionChange,
  emoji: Settled<Emoji>,
): Promise<true | null> {
  const early = peek(emoji);
  const stored = storedId(messageId);
  const read = await loadChannelWith<{ message: Message; mine: null; emoji: unknown }>(
    ctx,
    subject,
    channelId,
    {
      extra: {
        message: messageKeyFor(messageId),
        mine: early && stored ? keys.reaction(stored, early.text, subject.user_id) : null,
        emoji: early?.customName ? keys.emoji(subject.team_id, early.customName) : null,
      },
      audience: true,
    },
  );
  const entry = messageIn(read.channel, read.extra.message);
  authorize(subject, "reaction.set", read);
  const { text, customName } = unwrap(emoji);
  if (customName && read.extra.emoji.versionstamp === null) throw unknownCustomEmoji(customName);
  const message = entry.value;
  if (isSystem(message)) throw invalid("message", "System messages can't be reacted to.");
  if (message.deleted_at) throw invalid("message", "A deleted message can't be reacted to.");
  const mine = read.extra.mine;
  if ((mine.versionstamp !== null) === present) return true;
  const reactions = present
    ? withAdded(message.reactions, text)
    : withRemoved(message.reactions, text);
  const key = keys.reaction(message.id, text, subject.user_id);
  const next = { ...message, reactions };
  const audience = present ? await audienceOf(ctx, read.channel, read.versions) : NOBODY;
  const checks = [entry, read.entry, mine, ...audience.checks];
  const op = ctx.kv.atomic().check(...checks);
  if (present) emit(op.set(key, null), audience, reactionAdded(message, text, subject));
  else op.delete(key);
  const done = await replaceMessage(op, next);
  return done || null;
}

/** Who reacted, listed per emoji at most: Slack's reactions.get gives the first ones. */
const REACTORS_LISTED = 100;

/**
 * Who reacted to message `messageId` (whose reading the caller authorized), by emoji, in the
 * order the store keeps them: at most REACTORS_LISTED each.
 */
export async function reactorsOf(ctx: Ctx, messageId: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for await (const e of ctx.kv.list({ prefix: keys.reactions(messageId) })) {
    const [emoji, userId] = [e.key[2] as string, e.key[3] as string];
    const users = out.get(emoji) ?? [];
    if (users.length < REACTORS_LISTED) out.set(emoji, [...users, userId]);
  }
  return out;
}
