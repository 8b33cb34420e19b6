/**
 * What a webhook delivery's body is, as zod schemas: the one source of the event catalog
 * (`GET /api/v1/event-types`, catalog.ts), of openapi.yaml's event and message schemas (written by
 * `deno task catalog`), and of the types the payload builders return (views.ts' MessageView and
 * the `*Data` types here), so a builder that strays from its schema does not compile.
 *
 * A schema's `id` names it in openapi.yaml's components and in a catalog schema's `$defs`.
 */
import { z } from "zod";
import { type Attachment, type Block, EVENT_TYPES } from "../../core/types.ts";

/** A description written over several lines, as one paragraph. */
const prose = (text: string) => text.replace(/\s*\n\s*/g, " ");

export const Uuid = z.string().meta({ id: "Uuid", format: "uuid" });

const DateTime = z.string().meta({ format: "date-time" });

export const NullableDateTime = DateTime.nullable().meta({ id: "NullableDateTime" });

export const EventTypeName = z.enum(EVENT_TYPES).meta({ id: "EventType" });

export const Member = z.strictObject({
  id: Uuid,
  name: z.string(),
  type: z.enum(["human", "bot"]),
}).meta({ id: "Member", description: "A workspace member, human or bot." });

const ReactionSummary = z.strictObject({
  emoji: z.string().min(1).max(32),
  count: z.int().min(1),
}).meta({ id: "ReactionSummary", description: "One emoji and how many members reacted with it." });

const BLOCK_TYPES = [
  "section",
  "actions",
  "context",
  "divider",
  "header",
  "image",
  "rich_text",
  "input",
  "markdown",
  "context_actions",
  "table",
  "task_card",
  "plan",
] as const;

/** Loose on purpose: domain/messages/blocks.ts checks each block's elements when written. */
const BlockSchema = z.looseObject({
  type: z.enum(BLOCK_TYPES),
  block_id: z.string().max(255).optional(),
}).meta({
  id: "Block",
  description: prose(
    `A Block Kit block, with Slack's shapes and limits: \`section\` (\`text\`, \`fields\`,
\`accessory\`), \`actions\` (\`elements\`), \`context\` (\`elements\`: text objects and images),
\`divider\`, \`header\` (\`text\`: plain_text), \`image\` (\`image_url\`, \`alt_text\`, \`title\`),
\`rich_text\` (what Slack's own clients send: sections, lists, preformatted text and quotes), and in
views \`input\` (\`label\`, \`element\`, \`optional\`, \`dispatch_action\`). Elements: \`button\`,
\`overflow\`, \`static_select\`, \`multi_static_select\`, \`external_select\`,
\`multi_external_select\`, \`users_select\`, \`multi_users_select\`, \`conversations_select\`,
\`multi_conversations_select\`, \`channels_select\`, \`multi_channels_select\`, \`datepicker\`,
\`timepicker\`, \`checkboxes\`, \`radio_buttons\`, \`image\` (an accessory or in a context), and in
inputs \`plain_text_input\`, \`email_text_input\`, \`url_text_input\`, \`number_input\`; text
objects \`{ type: "mrkdwn" | "plain_text", text }\` of at most 3,000 characters. What agents
write, in messages: \`markdown\` (\`text\`, at most 12,000 characters), \`context_actions\`
(\`feedback_buttons\`, pressed as buttons are with the chosen button's \`value\`, and
\`icon_button\`), \`table\` (\`rows\` of \`raw_text\`, \`raw_number\` or \`rich_text\` cells),
\`task_card\` (\`task_id\`, \`title\`, \`status\`: pending, in_progress, complete or error) and
\`plan\` (\`title\`, \`tasks\`); their text is part of a message's plain text. An invalid block
is 422 on \`blocks\`, each fault named by its JSON pointer (\`/blocks/0/text/text: ...\`).`,
  ),
});

/** Loose on purpose: domain/messages/attachments.ts checks an attachment when written. */
const AttachmentSchema = z.looseObject({
  fallback: z.string().optional(),
  color: z.string().optional(),
  pretext: z.string().optional(),
  author_name: z.string().optional(),
  author_link: z.string().optional(),
  author_icon: z.string().optional(),
  title: z.string().optional(),
  title_link: z.string().optional(),
  text: z.string().optional(),
  fields: z.array(z.looseObject({
    title: z.string().optional(),
    value: z.string().optional(),
    short: z.boolean().optional(),
  })).optional(),
  image_url: z.string().optional(),
  thumb_url: z.string().optional(),
  footer: z.string().optional(),
  footer_icon: z.string().optional(),
  ts: z.union([z.number(), z.string()]).optional(),
  mrkdwn_in: z.array(z.string()).optional(),
  blocks: z.array(BlockSchema).optional(),
}).meta({
  id: "Attachment",
  description: "One of Slack's message attachments, with the fields Slack documents.",
});

const Poll = z.strictObject({
  options: z.array(z.strictObject({
    id: z.string().describe('"1" to "10", in the order the options were given.'),
    text: z.string().min(1).max(80),
    count: z.int().min(0),
  })).min(2).max(10),
  multiple: z.boolean().describe("Whether a person may vote for several options."),
  closed_at: DateTime.nullable().describe(
    "When the author or an admin closed it; no vote is taken after.",
  ),
}).meta({ id: "Poll" });

export const MESSAGE_TYPES = [
  "standard",
  "member_joined",
  "member_left",
  "poll",
  "assistant_thread",
] as const;

const messageShape = {
  id: Uuid,
  channel_id: Uuid,
  body: z.string().max(10_000).describe(
    prose(
      `Empty on a tombstone (a deleted message) and on system notices. A message sent with
\`blocks\` and no body has the blocks' plain text here. Slack's markup stays as written
(\`<@id>\`, \`<#id>\`, \`<url|label>\`, \`&lt;\`): \`text\` is the same made readable.`,
    ),
  ),
  text: z.string().optional().describe(
    prose(
      `The body as people read it: Slack's markup as plain text (\`<url|label>\` is \`label (url)\`,
\`&lt;\` is \`<\`), a mentioned person as \`@name\`, a mentioned public channel as \`#name\`, a
private channel or direct message as \`#private-channel\` (or the label its author gave), so no
reader learns a name it could not see. Names are those of when the message was written or last
edited. Absent only in events recorded before 0.32.0.`,
    ),
  ),
  type: z.enum(MESSAGE_TYPES).describe(
    prose(
      `\`standard\`: an authored message. \`member_joined\` / \`member_left\`: system notices the
service writes itself, authored by the member who joined or left, its body as Slack words it
(\`<@id> has joined the channel\`, \`... has left ...\`). \`poll\`: a poll, its question the body. \`assistant_thread\`: the root of a thread a person started with an agent (Slack's
\`assistant_app_thread\`), authored by them, its body the thread's title.`,
    ),
  ),
  author: Member,
  reply_to_id: Uuid.nullable().describe("The message this one replies to inline."),
  thread_root_id: Uuid.nullable().describe("The root of the thread this message is a reply in."),
  sent_to_channel: z.boolean().describe(
    prose(
      `Addition: true for a thread reply that is also shown in the channel timeline; always false on
messages that are not thread replies.`,
    ),
  ),
  reactions: z.array(ReactionSummary).describe(
    "Each emoji once, in the order it was first used; empty on a tombstone.",
  ),
  created_at: NullableDateTime,
  edited_at: DateTime.nullable().describe("Null until the message is edited."),
  ts: z.string().regex(/^[0-9]+\.[0-9]{6}$/).meta({
    examples: ["1795751281.420000"],
    description: prose(
      `Addition: Slack-style \`"<seconds>.<6 digits>"\`, unique in the channel and increasing with
creation: what the Slack Web API (\`/api/slack/...\`) names the message by (\`ts\`,
\`thread_ts\`, \`timestamp\`).`,
    ),
  }),
  blocks: z.array(BlockSchema).max(50).nullable().describe(
    "Addition: the message's Block Kit blocks, as written (null without; a tombstone has none).",
  ),
  poll: Poll.nullable().describe(
    prose(
      `A \`poll\` message's options and counts; null on every other message and on a deleted poll's
tombstone.`,
    ),
  ),
  attachments: z.array(AttachmentSchema).optional().describe(
    prose(`Addition: Slack's attachments, when the message was sent some (absent otherwise, and on a
tombstone).`),
  ),
  metadata: z.object({
    event_type: z.string(),
    event_payload: z.record(z.string(), z.unknown()),
  }).optional().describe(
    prose(
      `Addition: an app's metadata (Slack's \`metadata\`: \`event_type\` and \`event_payload\`), when
it posted or edited the message with some (absent otherwise).`,
    ),
  ),
  streaming: z.literal(true).optional().describe(
    prose(
      `Addition: true while an agent streams the message (\`chat.startStream\`): its text so far;
absent once the stream stops, and on every other message.`,
    ),
  ),
};

export const Message = z.strictObject(messageShape).meta({
  id: "Message",
  description: "A message: what the API answers with and what message events carry.",
});

const onMessage = { channel_id: Uuid, message_id: Uuid };

const ReactionAdded = z.strictObject({
  ...onMessage,
  emoji: z.string().min(1).max(32),
  user: Member,
});

const Vote = z.strictObject({ ...onMessage, option_id: z.string(), user: Member });

const MemberAdded = z.strictObject({ channel_id: Uuid, user: Member });

const Ping = z.strictObject({ subscription_id: Uuid });

/** Each type's `data`: the schema its builder's type comes from. */
export const EVENT_DATA = {
  "message.created": Message,
  "message.updated": Message,
  "message.deleted": Message,
  "reaction.added": ReactionAdded,
  "channel.member_added": MemberAdded,
  "poll.vote_added": Vote,
  "poll.vote_removed": Vote,
  "poll.closed": Message,
  "ping": Ping,
} as const;

/** What a subscription can be sent: the event types, and the `ping` of a test. */
export type CatalogType = keyof typeof EVENT_DATA;

/** Kept as stored: blocks.ts and attachments.ts check them when written; the schema is loose. */
interface CheckedParts {
  blocks: Block[] | null;
  attachments?: Attachment[];
}

/** The API's Message: what clients and webhook receivers see, `text` always rendered. */
export type MessageView =
  & Omit<z.infer<typeof Message>, "text" | keyof CheckedParts>
  & { text: string }
  & CheckedParts;

/** The `data` of an event of type T, as its builder must make it. */
export type EventData<T extends CatalogType> = typeof EVENT_DATA[T] extends typeof Message
  ? MessageView
  : z.infer<typeof EVENT_DATA[T]>;

const ENVELOPE_DESCRIPTION = prose(
  `The delivery envelope (the same for every event type). \`id\` is the event id: the same on every
retry and for every subscription that gets the event, and repeated in \`X-Service-Delivery\` and
\`webhook-id\`; receivers de-duplicate on it (delivery is at least once). \`created_at\` is when the
event happened. Payload shapes are frozen in v1: fields may be added, never changed or removed.`,
);

/** openapi.yaml's name for each type's whole delivery body. */
const ENVELOPE_IDS: Record<CatalogType, string> = {
  "message.created": "MessageCreatedEvent",
  "message.updated": "MessageUpdatedEvent",
  "message.deleted": "MessageDeletedEvent",
  "reaction.added": "ReactionAddedEvent",
  "channel.member_added": "ChannelMemberAddedEvent",
  "poll.vote_added": "PollVoteAddedEvent",
  "poll.vote_removed": "PollVoteRemovedEvent",
  "poll.closed": "PollClosedEvent",
  "ping": "PingEvent",
};

/** The whole body of a delivery of `type`: `{ id, type, created_at, data }`. */
const envelopeSchema = (type: CatalogType) =>
  z.strictObject({
    id: Uuid,
    type: z.literal(type),
    created_at: DateTime,
    data: EVENT_DATA[type],
  }).meta({ id: ENVELOPE_IDS[type], description: ENVELOPE_DESCRIPTION });

/** Each type's delivery body, made once: an id names one schema only. */
export const ENVELOPES = Object.fromEntries(
  (Object.keys(EVENT_DATA) as CatalogType[]).map((type) => [type, envelopeSchema(type)]),
) as { [T in CatalogType]: ReturnType<typeof envelopeSchema> };
