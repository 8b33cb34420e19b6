/**
 * An example of each type's `data`: the catalog shows them (catalog.ts) and a test send delivers
 * them (sends.ts), so a receiver's handler for a type can be tried before any real event. Ids and
 * times are fixed, so the catalog reads the same on every call; a test send puts in the
 * subscription's own id and first channel.
 */
import type { MemberRef, Message } from "../../core/types.ts";
import { tsOfIso } from "../../core/ids.ts";
import { messageView } from "../views.ts";
import type { CatalogType, EventData } from "./event_schemas.ts";

/** Where a test send's example goes: the subscription, and a channel it hears. */
export interface ExamplePlace {
  subscriptionId?: string;
  channelId?: string;
}

/** When every example happened, its envelope's `created_at` too. */
export const EXAMPLE_AT = "2026-11-27T09:30:00.000Z";
const ID = {
  subscription: "0195a8c2-1f40-7000-8000-00000000a001",
  channel: "0195a8c2-1f40-7000-8000-00000000c001",
  message: "0195a8c2-1f40-7000-8000-00000000d001",
  team: "0195a8c2-1f40-7000-8000-00000000f001",
};

const person: MemberRef = {
  id: "0195a8c2-1f40-7000-8000-00000000b001",
  name: "Sample Person",
  type: "human",
};

function exampleMessage(channelId: string): Message {
  return {
    id: ID.message,
    channel_id: channelId,
    team_id: ID.team,
    body: "This is a sample message, sent by a test: no channel holds it.",
    type: "standard",
    author: person,
    reply_to_id: null,
    thread_root_id: null,
    sent_to_channel: false,
    reactions: [{ emoji: "👍", count: 1 }],
    created_at: EXAMPLE_AT,
    edited_at: null,
    deleted_at: null,
    client_uuid: null,
    timeline_pos: null,
    thread_pos: null,
    ts: tsOfIso(EXAMPLE_AT),
    blocks: null,
    poll: null,
  };
}

const EDITED_AT = "2026-11-27T09:31:00.000Z";

const vote = ({ channelId }: Required<ExamplePlace>) => ({
  channel_id: channelId,
  message_id: ID.message,
  option_id: "1",
  user: person,
});

const EXAMPLES: { [T in CatalogType]: (place: Required<ExamplePlace>) => EventData<T> } = {
  "message.created": (p) => messageView(exampleMessage(p.channelId)),
  "message.updated": (p) => {
    const view = messageView({ ...exampleMessage(p.channelId), edited_at: EDITED_AT });
    return { ...view, body: `${view.body} (edited)`, text: `${view.text} (edited)` };
  },
  "message.deleted": (p) =>
    messageView({ ...exampleMessage(p.channelId), body: "", reactions: [], deleted_at: EDITED_AT }),
  "reaction.added": (p) => ({
    channel_id: p.channelId,
    message_id: ID.message,
    emoji: "👍",
    user: person,
  }),
  "channel.member_added": (p) => ({ channel_id: p.channelId, user: person }),
  "poll.vote_added": vote,
  "poll.vote_removed": vote,
  "poll.closed": (p) =>
    messageView({
      ...exampleMessage(p.channelId),
      type: "poll",
      body: "A sample poll?",
      reactions: [],
      poll: {
        options: [{ id: "1", text: "Yes", count: 2 }, { id: "2", text: "No", count: 1 }],
        multiple: false,
        closed_at: EDITED_AT,
      },
    }),
  "ping": (p) => ({ subscription_id: p.subscriptionId }),
};

/** The `data` of an example event of `type`, placed where `place` says. */
export function exampleData(type: CatalogType, place: ExamplePlace = {}): unknown {
  return EXAMPLES[type]({
    subscriptionId: place.subscriptionId ?? ID.subscription,
    channelId: place.channelId ?? ID.channel,
  });
}
