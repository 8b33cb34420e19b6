/**
 * Each action of domain/policy.ts and the resource it acts on, as its rule sees it: the table's
 * shape, apart from its rules.
 */
import type { Channel, Message, User, UserType } from "../core/types.ts";
import type { Subscription } from "../core/webhook_records.ts";

/** What never changes about a channel once made, and decides who sees it. */
export type ChannelShape = Pick<Channel, "team_id" | "visibility" | "is_direct">;

/** A channel as a rule sees it: the record, and whether the subject is a member. */
export interface ChannelTarget {
  channel: Channel;
  isMember: boolean;
}

export interface MessageTarget extends ChannelTarget {
  message: Message;
}

/** Removing `userId` from a channel; `targetIsMember` says whether it is in it. */
export interface RemovalTarget extends ChannelTarget {
  userId: string;
  targetIsMember: boolean;
}

export type SubscriptionTarget = Pick<Subscription, "team_id" | "created_by" | "app">;

/** The user whose tokens are managed. */
export type HolderTarget = { id: string; team_id: string; type: UserType };

export type TeamTarget = { team_id: string };

/** A person or bot of a team, as deactivation and role changes act on it. */
export type PersonTarget = Pick<User, "id" | "team_id" | "type" | "role">;

/** Each action and the resource it acts on. */
export interface Targets {
  /** Show a channel, read its messages and members, read its events (feed and stream). */
  "channel.read": ChannelTarget;
  /** Archive or unarchive. */
  "channel.archive": ChannelTarget;
  /** Rename: its creator or a team admin. */
  "channel.rename": ChannelTarget;
  /** Set its topic or purpose: its members, while it is not archived. */
  "channel.describe": ChannelTarget;
  /** Post a message. */
  "channel.post": ChannelTarget;
  /** Reach a channel's member list to change it: an admin may, in a private channel it is not in. */
  "member.manage": ChannelTarget;
  "member.add": ChannelTarget;
  "member.remove": RemovalTarget;
  "message.edit": MessageTarget;
  "message.delete": MessageTarget;
  /** Add to a reply one streams, or stop it (`chat.appendStream`, `chat.stopStream`). */
  "message.stream": MessageTarget;
  /** Name an agent's thread (`assistant.threads.setTitle`): its root's text. */
  "agent.retitle": MessageTarget;
  /** Pin a message in its channel, or unpin it: whoever may post there. */
  "message.pin": ChannelTarget;
  /** Add or remove one's reaction; vote in a poll. */
  "reaction.set": ChannelTarget;
  /** Run an app's slash command in a channel (then post there, as `channel.post` says). */
  "command.run": ChannelTarget;
  /** Press an element of an app's message in a channel (then post there). */
  "element.press": ChannelTarget;
  /** Open an app's Home in one's team: people only. */
  "app.home_open": TeamTarget;
  /** Join a channel oneself: what one sees, and an installed app's bot any public channel. */
  "channel.join": ChannelTarget & { joinsAsApp: boolean };
  /** Run an app's shortcut in one's team (on a message one reads): people only. */
  "shortcut.run": TeamTarget;
  /** End a poll's voting: its author, or a team admin. */
  "poll.close": MessageTarget;
  /** Whether an event of the channel reaches a subscription: its owner must see the channel. */
  "event.hear": ChannelTarget;
  /** See a subscription and its deliveries (list, show). */
  "subscription.read": SubscriptionTarget;
  /** Rename, delete, re-enable, rotate the secret, test, redeliver, recover. */
  "subscription.manage": SubscriptionTarget;
  /** Change where it delivers and what it hears: `url`, `events`, `channel_ids`. */
  "subscription.retarget": SubscriptionTarget;
  /** Create a token for this user. */
  "token.create": HolderTarget;
  /** Rotate or revoke a token of this user. */
  "token.manage": HolderTarget;
  /** Bots, incoming webhooks, the audit log: the team's parts of the settings screen. */
  "team.administer": TeamTarget;
  /** See the team's people and bots, by name (Slack's users.list and users.info). */
  "team.read": TeamTarget;
  /** Point an incoming webhook at this channel. */
  "incoming.target": ChannelTarget;
  /** Deactivate or reactivate this user. */
  "user.deactivate": PersonTarget;
  /** Change this human's role. */
  "user.role": PersonTarget;
  /** Change this user's profile (its email). */
  "user.email": PersonTarget;
  /** Register, change or delete an app: the operator's alone (an app serves every team). */
  "app.register": Record<never, never>;
  /** Approve an app's install into this team. */
  "app.install": TeamTarget;
  /** See the team's installed apps and uninstall one. */
  "app.uninstall": TeamTarget;
}

export type Action = keyof Targets;

/** The actions on a channel alone, which loading the channel can decide. */
export type ChannelAction = {
  [A in Action]: ChannelTarget extends Targets[A] ? A : never;
}[Action];
