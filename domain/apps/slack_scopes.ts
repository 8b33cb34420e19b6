import type { Scope } from "../../core/types.ts";

/** Slack's bot scopes and ours they grant (a Map: a manifest names the key). */
export const SLACK_SCOPES = new Map<string, Scope>(Object.entries({
  "channels:read": "channels:read",
  "groups:read": "channels:read",
  "im:read": "channels:read",
  "mpim:read": "channels:read",
  "channels:manage": "channels:write",
  "groups:write": "channels:write",
  "channels:history": "messages:read",
  "groups:history": "messages:read",
  "im:history": "messages:read",
  "mpim:history": "messages:read",
  "app_mentions:read": "messages:read",
  "chat:write": "messages:write",
  "chat:write.public": "messages:write",
  "im:write": "messages:write",
  "reactions:read": "messages:read",
  "reactions:write": "reactions:write",
  "pins:read": "messages:read",
  "pins:write": "messages:write",
  "users:read": "members:read",
  "users:read.email": "users:read.email",
  "channels:join": "members:write",
  "channels:write.invites": "members:write",
  "groups:write.invites": "members:write",
  "mpim:write.invites": "members:write",
  "users.profile:read": "members:read",
  "commands": "commands",
  "assistant:write": "messages:write",
  "metadata.message:read": "messages:read",
}));

/**
 * Slack's scopes for methods any token of a team calls here (emoji.list: the team's custom emoji
 * are no secret from whoever reacts): accepted, granting nothing more.
 */
export const SLACK_OPEN = new Set(["emoji:read"]);

/** The scope that asks the admin for a channel and gives the app an incoming webhook there. */
export const INCOMING = "incoming-webhook";

/**
 * Slack's bot scopes for what the service does not offer (files, user groups, reminders,
 * bookmarks, calls...): a manifest exported from Slack lists them, so they are ignored with a
 * warning rather than refused. A name that is no Slack scope at all is still refused: a typo.
 */
export const SLACK_UNGRANTED = new Set(
  `
  bookmarks:read bookmarks:write calls:read calls:write canvases:read
  canvases:write channels:write.topic chat:write.customize
  conversations.connect:manage conversations.connect:read conversations.connect:write dnd:read
  files:read files:write groups:write.topic
  links.embed:write links:read links:write mpim:write
  mpim:write.topic reminders:read reminders:write
  remote_files:read remote_files:share remote_files:write team.billing:read
  team.preferences:read team:read usergroups:read usergroups:write
  users:write workflow.steps:execute
`.trim().split(/\s+/),
);

/**
 * The Slack scope a Slack developer asks for to get one of ours: what `missing_scope` names.
 * Webhook subscriptions have no Slack scope: they are named as they are.
 */
export const SLACK_SCOPE_FOR: Record<Scope, string> = {
  "webhooks:read": "webhooks:read",
  "webhooks:write": "webhooks:write",
  "channels:read": "channels:read",
  "channels:write": "channels:manage",
  "messages:read": "channels:history",
  "messages:write": "chat:write",
  "reactions:write": "reactions:write",
  "members:read": "users:read",
  "members:write": "channels:join",
  "commands": "commands",
  "users:read.email": "users:read.email",
};

/**
 * The Slack scopes `scopes` (ours) grant, as Slack names them in `missing_scope`'s `provided`:
 * each of ours by the Slack scopes that ask for it, and the webhook scopes, which Slack lacks, as
 * they are.
 */
export function slackScopesGranted(scopes: readonly Scope[]): string[] {
  const granted = [...SLACK_SCOPES].filter(([, ours]) => scopes.includes(ours)).map(([s]) => s);
  const unnamed = scopes.filter((s) => ![...SLACK_SCOPES.values()].includes(s));
  return [...granted, ...unnamed];
}
