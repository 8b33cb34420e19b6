/** `auth.test`, `users.*`, `reactions.*`, `pins.*`: who calls, the team's people, reactions, pins. */
import { z } from "zod";
import { findTeam, teamPeople, teamPerson } from "../../domain/people/workspace.ts";
import { reactorsOf, setReaction } from "../../domain/messages/reactions.ts";
import { showMessage } from "../../domain/messages/messages.ts";
import { listPins, pinMessage } from "../../domain/messages/pins.ts";
import { messageIdByTs } from "../../domain/messages/by_ts.ts";
import { seesEmails, userByEmail } from "../../domain/people/email.ts";
import { slackMessage, slackProfile, slackUser } from "../../domain/slack/shapes.ts";
import type { Method, MethodCall } from "./method.ts";
import { args, countArg } from "./args.ts";
import { offsetPage } from "./paging.ts";

const userArgs = z.object({ user: z.string() });
const profileArgs = z.object({ user: z.string().optional() });
const emailArgs = z.object({ email: z.string() });
const listArgs = z.object({ limit: countArg(200, 1000), cursor: z.string().optional() });
const reactionArgs = z.object({ channel: z.string(), timestamp: z.string(), name: z.string() });
const reactionsOf = z.object({ channel: z.string(), timestamp: z.string() });
const pinsOf = z.object({ channel: z.string() });

/** Who the token acts as: Bolt reads `user_id` and `bot_id` to tell the app's own messages. */
async function authTest({ ctx, subject }: MethodCall) {
  const team = await findTeam(ctx, subject.team_id);
  return {
    url: `${ctx.settings.baseUrl}/`,
    team: team.name,
    user: subject.name,
    team_id: subject.team_id,
    user_id: subject.user_id,
    ...(subject.type === "bot" ? { bot_id: subject.user_id } : {}),
    is_enterprise_install: false,
  };
}

async function usersInfo({ ctx, subject, params }: MethodCall) {
  const user = await teamPerson(ctx, subject, args(userArgs, params).user);
  return { user: slackUser(user, seesEmails(subject)) };
}

/** users.profile.get: the caller's profile, or another person's of its team. */
async function profileGet({ ctx, subject, params }: MethodCall) {
  const user = await teamPerson(ctx, subject, args(profileArgs, params).user ?? subject.user_id);
  return { profile: slackProfile(user, seesEmails(subject)) };
}

async function lookupByEmail({ ctx, subject, params }: MethodCall) {
  const { email } = args(emailArgs, params);
  return { user: slackUser(await userByEmail(ctx, subject, email), true) };
}

async function usersList({ ctx, subject, params }: MethodCall) {
  const p = args(listArgs, params);
  const page = offsetPage(await teamPeople(ctx, subject), p);
  return {
    members: page.items.map((u) => slackUser(u, seesEmails(subject))),
    cache_ts: Math.floor(Date.now() / 1000),
    response_metadata: { next_cursor: page.next ?? "" },
  };
}

/** `name` is Slack's emoji name without colons (`thumbsup`, a custom one's), as `:name:`. */
const react = (present: boolean) => async ({ ctx, subject, params }: MethodCall) => {
  const p = args(reactionArgs, params);
  const messageId = await messageIdByTs(ctx, subject, { channelId: p.channel, ts: p.timestamp });
  const name = p.name.replace(/^:|:$/g, "");
  await setReaction(ctx, subject, {
    channelId: p.channel,
    messageId,
    segment: encodeURIComponent(`:${name}:`),
    present,
  });
  return {};
};

/** reactions.get: a message with its reactions, as Slack gives an item. */
async function reactionsGet({ ctx, subject, params }: MethodCall) {
  const p = args(reactionsOf, params);
  const messageId = await messageIdByTs(ctx, subject, { channelId: p.channel, ts: p.timestamp });
  const message = await showMessage(ctx, subject, p.channel, messageId);
  const reactors = await reactorsOf(ctx, message.id);
  return { type: "message", channel: p.channel, message: slackMessage(message, { reactors }) };
}

/** pins.add and pins.remove: the message at `channel` and `timestamp`. */
const pin = (present: boolean) => async ({ ctx, subject, params }: MethodCall) => {
  const p = args(reactionsOf, params);
  const messageId = await messageIdByTs(ctx, subject, { channelId: p.channel, ts: p.timestamp });
  await pinMessage(ctx, subject, { channelId: p.channel, messageId, present });
  return {};
};

async function pinsList({ ctx, subject, params }: MethodCall) {
  const p = args(pinsOf, params);
  const pins = await listPins(ctx, subject, p.channel);
  return {
    items: pins.map(({ message, pin }) => ({
      type: "message",
      channel: p.channel,
      created: Math.floor(Date.parse(pin.pinned_at) / 1000),
      created_by: pin.pinned_by,
      message: slackMessage(message),
    })),
  };
}

export const peopleMethods: Record<string, Method> = {
  "auth.test": { scope: null, run: authTest },
  "users.info": { scope: "members:read", run: usersInfo },
  "users.list": { scope: "members:read", run: usersList },
  "users.profile.get": { scope: "members:read", slackScope: "users.profile:read", run: profileGet },
  "users.lookupByEmail": { scope: "users:read.email", run: lookupByEmail },
  "reactions.add": { scope: "reactions:write", run: react(true) },
  "reactions.remove": { scope: "reactions:write", run: react(false) },
  "reactions.get": { scope: "messages:read", slackScope: "reactions:read", run: reactionsGet },
  "pins.add": { scope: "messages:write", slackScope: "pins:write", run: pin(true) },
  "pins.remove": { scope: "messages:write", slackScope: "pins:write", run: pin(false) },
  "pins.list": { scope: "messages:read", slackScope: "pins:read", run: pinsList },
};
