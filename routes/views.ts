import type { Channel } from "../domain/types.ts";

/** The API's Channel: the stored record minus what only the server needs. */
export const channelView = (ch: Channel) => ({
  id: ch.id,
  name: ch.name,
  slug: ch.slug,
  visibility: ch.visibility,
  topic: ch.topic,
  is_general: ch.is_general,
  is_archived: ch.is_archived,
  is_direct: ch.is_direct,
  created_at: ch.created_at,
});
