/** The events a message's changes fire (message.created, .updated, .deleted, poll.closed). */
import type { Ctx } from "../context.ts";
import type { EventType, Message } from "../../core/types.ts";
import type { EventDraft } from "../../kv/outbox/outbox.ts";
import { installOfBot } from "../apps/bot_install.ts";
import { storedMessageView } from "../views.ts";

/** A message event; with `metadataOf` (from `metadataOf`), heard by apps' metadata listeners. */
export const messageEvent = (
  type: EventType,
  m: Message,
  metadataOf?: EventDraft["metadata_of"],
): EventDraft => ({
  type,
  team_id: m.team_id,
  channel_id: m.channel_id,
  data: storedMessageView(m),
  ...(metadataOf ? { metadata_of: metadataOf } : {}),
});

/**
 * The metadata `m` carries and the app whose bot posted it, which apps' `metadata_subscriptions`
 * match (domain/webhooks/audience.ts); undefined without metadata, at no cost.
 */
export async function metadataOf(ctx: Ctx, m: Message): Promise<EventDraft["metadata_of"]> {
  if (!m.metadata) return undefined;
  const install = m.author.type === "bot"
    ? await installOfBot(ctx, { teamId: m.team_id, botId: m.author.id })
    : null;
  return { event_type: m.metadata.event_type, app_id: install?.app_id ?? null };
}
