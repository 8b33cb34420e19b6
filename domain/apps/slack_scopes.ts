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
  "users:read": "members:read",
  "channels:join": "members:write",
  "commands": "commands",
}));

/** The scope that asks the admin for a channel and gives the app an incoming webhook there. */
export const INCOMING = "incoming-webhook";
