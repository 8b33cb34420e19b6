/**
 * A message's rendered text (issue 57): its body with Slack's markup made readable, mentions by
 * name. Names are resolved when the message is written or edited and kept on it
 * (`mention_names`), so every reader, webhook and event shows the same text without a read per
 * message: people by name (anyone of the team sees the team's people), public channels by name,
 * and a private channel or direct message as `#private-channel` unless the author labelled it
 * (`<#id|label>`), so no reader learns a name it could not see.
 */
import type { Channel, User } from "../../core/types.ts";
import { isClosed } from "../../core/channel_kind.ts";
import { keys } from "../../kv/keys.ts";
import { getAll } from "../../kv/store/commit.ts";
import type { Store } from "../../kv/store/store.ts";

/** `<@id>`, `<#id>`, `<#id|label>`: an id is a UUID here. */
const MENTION =
  /<([@#])([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\|[^<>]*)?>/gi;
/** Names resolved per message at most: a body of 10,000 characters could name a thousand. */
const MAX_NAMES = 100;

/** The names of what `body` mentions, as its team's readers may see them; undefined with none. */
export async function mentionNames(
  kv: Store,
  { teamId, body }: { teamId: string; body: string },
): Promise<Record<string, string> | undefined> {
  const people = new Set<string>();
  const channels = new Set<string>();
  for (const [, sigil, id] of body.matchAll(MENTION)) {
    if (people.size + channels.size >= MAX_NAMES) break;
    (sigil === "@" ? people : channels).add(id.toLowerCase());
  }
  if (people.size + channels.size === 0) return undefined;
  const [users, rooms] = await Promise.all([
    getAll<User>(kv, [...people].map(keys.user)),
    getAll<Channel>(kv, [...channels].map(keys.channel)),
  ]);
  const names: Record<string, string> = {};
  for (const { value: u } of users) if (u && u.team_id === teamId) names[u.id] = u.name;
  for (const { value: c } of rooms) {
    if (c && c.team_id === teamId && !isClosed(c)) {
      names[c.id] = c.name;
    }
  }
  return names;
}
