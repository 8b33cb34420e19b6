/**
 * Who may do what: every rule of access, in one place. For one action on one resource, a rule
 * answers whether the subject may, and if not, whether it is told the resource does not exist
 * (404) or that it may not act on it (403). The API, the settings screen, the event feed and
 * delivery (who hears an event) all ask here; no route, page or command decides on its own.
 *
 * What never reaches a rule: a token's scope (checked per endpoint before any resource is read)
 * and the operator at the admin CLI, who acts as the system and is bound by none of these but
 * the channel's own state (`membersFrozen`: a direct message keeps its members, an archived
 * channel is read-only).
 */
import type { Channel, Role, UserType } from "../core/types.ts";
import { isClosed } from "../core/channel_kind.ts";
import { ApiError } from "../core/errors.ts";
import { isSystem } from "./messages/draft.ts";
import type { Principal, Who } from "./principals.ts";
import type {
  Action,
  ChannelShape,
  ChannelTarget,
  HolderTarget,
  MessageTarget,
  SubscriptionTarget,
  Targets,
} from "./policy_targets.ts";

export type { ChannelAction, ChannelShape } from "./policy_targets.ts";

/** "Team admin or above": a human admin or owner. Bots have no role. */
export const isAdmin = (p: { type: UserType; role: Role | null }) =>
  p.type === "human" && (p.role === "admin" || p.role === "owner");

/** Why an action is refused: hidden (404, as if it did not exist) or forbidden (403). */
export interface Denial {
  status: 403 | 404;
  message: string;
}

const hidden = (message: string): Denial => ({ status: 404, message });
const forbidden = (message: string): Denial => ({ status: 403, message });

/**
 * The 404 that hides a channel: the same for one that doesn't exist and one the caller may not
 * see, so it tells nobody which. A bot is told why it may not see one.
 */
export const channelNotFound = (p: Pick<Principal, "type"> | null): string =>
  p?.type === "bot"
    ? "Channel not found. (A bot sees only the channels it has been added to.)"
    : "Channel not found.";
export const SUBSCRIPTION_NOT_FOUND = "Webhook subscription not found.";
export const NOT_A_MEMBER = "That user is not a member of this channel.";
export const ARCHIVED = "The channel is archived; it is read-only until it is unarchived.";

/**
 * Whether a principal sees a channel. A bot: only as a member. A human: as a member, or when the
 * channel is public and not a direct message. `adminOverride`: the operations where a human
 * admin acts on a private channel of its team without being in it (archive, unarchive, adding
 * and removing members).
 */
function sees(
  p: Principal,
  { channel, isMember }: { channel: ChannelShape; isMember: boolean },
  adminOverride = false,
): boolean {
  if (channel.team_id !== p.team_id) return false;
  if (isMember) return true;
  if (p.type === "bot" || channel.is_direct) return false;
  return channel.visibility === "public" || (adminOverride && isAdmin(p));
}

/**
 * Whether membership can change what the rules let `p` do in a channel of this shape (unknown:
 * it may): not for a human in a public channel of its own team, who sees it anyway.
 */
export const membershipDecides = (p: Principal, shape: ChannelShape | undefined): boolean =>
  !shape || !sees(p, { channel: shape, isMember: false });

/** Read it, else the 404 that hides it. */
const readable = (p: Principal, t: ChannelTarget) => sees(p, t) ? null : hidden(channelNotFound(p));

/** Read it and write to it: archived channels are read-only. */
const writable = (p: Principal, t: ChannelTarget) =>
  readable(p, t) ?? (t.channel.is_archived ? forbidden(ARCHIVED) : null);

/** Why nobody, the operator included, may change this channel's members, or null. */
export function membersFrozen(channel: Channel): Denial | null {
  if (channel.is_direct) return forbidden("A direct message's members cannot change.");
  return channel.is_archived ? forbidden(ARCHIVED) : null;
}

const creatorOrAdmin = (p: Principal, channel: Channel) =>
  channel.created_by === p.user_id || (p.type === "human" && isAdmin(p));

/** A message of a channel the subject writes to, and its own. */
const ownMessage = (verb: string) => (p: Principal, t: MessageTarget) =>
  writable(p, t) ??
    (t.message.author.id === p.user_id
      ? null
      : forbidden(`You can only ${verb} your own messages.`));

const seesSubscription = (p: Principal, s: SubscriptionTarget) =>
  s.team_id === p.team_id && (s.created_by === p.user_id || isAdmin(p));

/**
 * An app's listener (what its install made for its Events API URL) is the app's: its manifest
 * decides it, so no subject sees or manages it as a subscription.
 */
const subscriptionVisible = (p: Principal, s: SubscriptionTarget) =>
  seesSubscription(p, s) && !s.app ? null : hidden(SUBSCRIPTION_NOT_FOUND);

/** Its own tokens; an admin also its team's bots'. */
const managesTokensOf = (p: Principal, h: HolderTarget) =>
  h.id === p.user_id || (h.type === "bot" && h.team_id === p.team_id && isAdmin(p));

const adminOf = (p: Principal, teamId: string) => p.team_id === teamId && isAdmin(p);

type Rules = { [A in Action]: (p: Principal, target: Targets[A]) => Denial | null };

/** A person of the team may; a bot is told it calls apps directly; anyone else sees nothing. */
const peopleOfTeam = (unseen: string, what: string) => (p: Principal, t: { team_id: string }) =>
  p.team_id !== t.team_id
    ? hidden(unseen)
    : p.type === "bot"
    ? forbidden(`Only people ${what}; bots call apps directly.`)
    : null;

const RULES: Rules = {
  "channel.read": readable,
  "channel.archive": (p, t) => {
    if (!sees(p, t, true)) return hidden(channelNotFound(p));
    if (t.channel.is_general) return forbidden("The general channel cannot be archived.");
    if (t.channel.is_direct) return forbidden("A direct message cannot be archived.");
    return creatorOrAdmin(p, t.channel)
      ? null
      : forbidden("Only the channel's creator or a team admin may archive it.");
  },
  "channel.rename": (p, t) => {
    if (!sees(p, t, true)) return hidden(channelNotFound(p));
    if (t.channel.is_direct) return forbidden("A direct message has no name to change.");
    if (t.channel.is_archived) return forbidden(ARCHIVED);
    return creatorOrAdmin(p, t.channel)
      ? null
      : forbidden("Only the channel's creator or a team admin may rename it.");
  },
  "channel.describe": (p, t) =>
    writable(p, t) ??
      (t.isMember ? null : forbidden("Only the channel's members may set its topic or purpose.")),
  "channel.post": writable,
  "member.manage": (p, t) => sees(p, t, true) ? null : hidden(channelNotFound(p)),
  // Slack's channels:join: an installed app's bot with it joins any public channel of its team;
  // other bots keep the seed's rule, and see only the channels they are in.
  "channel.join": (p, t) => {
    const c = t.channel;
    const asApp = t.joinsAsApp && c.team_id === p.team_id && !isClosed(c);
    if (!sees(p, t) && !asApp) return hidden(channelNotFound(p));
    return membersFrozen(c);
  },
  "member.add": (p, t) => {
    if (!sees(p, t, true)) return hidden(channelNotFound(p));
    const frozen = membersFrozen(t.channel);
    if (frozen) return frozen;
    if (t.channel.visibility === "private" && !t.isMember && !isAdmin(p)) {
      return forbidden("Only a member of this private channel or a team admin may add members.");
    }
    return null;
  },
  "member.remove": (p, t) => {
    if (!sees(p, t, true)) return hidden(channelNotFound(p));
    // The resource comes before the permission: someone not in the channel is 404, whoever asks.
    if (!t.targetIsMember) return hidden(NOT_A_MEMBER);
    if (t.channel.is_general) {
      return forbidden("Nobody can leave or be removed from the general channel.");
    }
    const frozen = membersFrozen(t.channel);
    if (frozen) return frozen;
    if (t.userId === p.user_id || creatorOrAdmin(p, t.channel)) return null;
    return forbidden("Only the channel's creator or a team admin may remove other members.");
  },
  "message.edit": ownMessage("edit"),
  "message.stream": ownMessage("stream into"),
  "message.delete": (p, t) =>
    ownMessage("delete")(p, t) ??
      (isSystem(t.message) ? forbidden("System messages can't be deleted.") : null),
  "reaction.set": writable,
  "message.pin": writable,
  // An agent names the threads people start with it: a thread's root in its bot's direct channel.
  "agent.retitle": (p, t) =>
    writable(p, t) ??
      (p.type === "bot" && t.channel.is_direct && t.message.type === "assistant_thread"
        ? null
        : forbidden("Only the agent a thread was started with may name it.")),
  // What a person does with an app; a bot calls the app directly instead.
  "command.run": (p, t) =>
    readable(p, t) ??
      (p.type === "bot" ? forbidden("Only people run commands; bots call apps directly.") : null),
  "element.press": (p, t) =>
    readable(p, t) ??
      (p.type === "bot" ? forbidden("Only people press buttons; bots call apps directly.") : null),
  "app.home_open": peopleOfTeam(
    "No such app in this team, or it has no Home.",
    "open an app's Home",
  ),
  "shortcut.run": peopleOfTeam("No such shortcut in this team.", "run shortcuts"),
  "poll.close": (p, t) =>
    writable(p, t) ??
      (t.message.author.id === p.user_id || (p.type === "human" && isAdmin(p))
        ? null
        : forbidden("Only the poll's author or a team admin may close it.")),
  // Admins get no exception here: a subscription hears what its owner reads, no more.
  "event.hear": readable,
  "subscription.read": subscriptionVisible,
  "subscription.manage": subscriptionVisible,
  "subscription.retarget": (p, s) =>
    subscriptionVisible(p, s) ?? (s.created_by === p.user_id ? null : forbidden(
      "Only the subscription's owner may change its url, events or channel_ids.",
    )),
  "token.create": (p, h) => managesTokensOf(p, h) ? null : hidden("No such user."),
  "token.manage": (p, h) => managesTokensOf(p, h) ? null : hidden("No such token."),
  "team.administer": (p, t) => adminOf(p, t.team_id) ? null : hidden("Not found."),
  "team.read": (p, t) => p.team_id === t.team_id ? null : hidden("No such user."),
  "incoming.target": (p, t) =>
    adminOf(p, t.channel.team_id) && sees(p, t) ? null : hidden("No such channel."),
  // An admin: members and bots; an owner: anyone; nobody: themselves.
  "user.deactivate": (p, t) => {
    if (!adminOf(p, t.team_id)) return hidden("No such user.");
    if (t.id === p.user_id) return forbidden("You can't deactivate yourself.");
    if (isAdmin(t) && p.role !== "owner") {
      return forbidden("Only an owner may deactivate an admin or owner.");
    }
    return null;
  },
  "user.role": (p, t) => {
    if (!adminOf(p, t.team_id)) return hidden("No such user.");
    return p.role === "owner" ? null : forbidden("Only an owner may change roles.");
  },
  // An admin anyone's of the team (the CLI too); nobody else, not even their own: whether an
  // address is taken would tell a member whose it is.
  "user.email": (p, t) => {
    if (p.team_id !== t.team_id) return hidden("No such user.");
    if (p.type === "human" && isAdmin(p)) return null;
    return forbidden("Only the team's admins set email addresses: ask one of them.");
  },
  "app.register": () => hidden("Not found."),
  // A member is told why, not shown a 404: the app's page sent them here on purpose.
  "app.install": (p, t) => {
    if (p.team_id !== t.team_id) return hidden("Not found.");
    return isAdmin(p) ? null : forbidden(
      "Only a team admin or owner can install an app. Ask one of them to open this link.",
    );
  },
  "app.uninstall": (p, t) => adminOf(p, t.team_id) ? null : hidden("No such app in this team."),
};

/** Why `who` may not do `action` on `target`, or null when it may. The operator always may. */
export function decide<A extends Action>(who: Who, action: A, target: Targets[A]): Denial | null {
  return who === null ? null : RULES[action](who, target);
}

export const permits = <A extends Action>(who: Who, action: A, target: Targets[A]) =>
  decide(who, action, target) === null;

/** The API error of a denial. */
export const denialError = (d: Denial, message = d.message) => new ApiError(d.status, message);

/**
 * Throws the denial as the API error (404 or 403) unless `who` may. `hiddenAs` replaces a 404's
 * message where a caller names the resource its own way (an incoming webhook, a bot).
 */
export function authorize<A extends Action>(
  who: Who,
  action: A,
  target: Targets[A],
  hiddenAs?: string,
): void {
  const denial = decide(who, action, target);
  if (!denial) return;
  throw denialError(denial, denial.status === 404 && hiddenAs ? hiddenAs : denial.message);
}
