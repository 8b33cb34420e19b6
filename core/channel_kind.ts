import type { Channel } from "./types.ts";
import type { ChannelKind } from "./webhook_records.ts";

type Shape = Pick<Channel, "visibility" | "is_direct">;

/** A channel's kind, as Slack's message events tell them apart. */
export const kindOf = (c: Shape): ChannelKind =>
  c.is_direct ? "direct" : c.visibility === "private" ? "private" : "public";

/**
 * Whether only a channel's members see it and its events: a private or direct channel. Being in
 * one lets a token read what the public can't; every other channel is open to the whole team.
 */
export const isClosed = (c: Shape): boolean => kindOf(c) !== "public";

/** The channel's name in what apps are sent, as Slack names it: a direct message has none. */
export const appChannelName = (c: Pick<Channel, "is_direct" | "slug">): string =>
  c.is_direct ? "directmessage" : c.slug;
