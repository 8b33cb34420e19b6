/**
 * One frame for every request the service sends an app and waits for (a command, a press, a
 * submission, a menu's options, a shortcut): where it goes and the secret that signs it are
 * resolved once, and the fields Slack puts on every interaction payload are added here, so no two
 * kinds of request can disagree on them.
 */
import type { Ctx } from "../context.ts";
import type { App } from "../../core/app_records.ts";
import type { Channel } from "../../core/types.ts";
import { appChannelName } from "../../core/channel_kind.ts";
import { type AppRequest, signingSecretOf } from "./app_call.ts";

/** Why an app with request URLs and no signing secret was sent nothing, in plain words. */
export const NO_SIGNING_SECRET = "the app has no signing secret (ask the operator)";

/** Where a request to an app goes (null: over its Socket Mode connection), and what signs it. */
export interface AppRoute {
  app: App;
  url: string | null;
  signingSecret: string | null;
}

/**
 * The route to `app` at `url`; "unsigned" when the app takes requests at URLs but has no signing
 * secret (registered before it had one): a request it got could not be told from a forgery, so
 * none is sent.
 */
export async function routeTo(
  ctx: Ctx,
  app: App,
  url: string | null,
): Promise<AppRoute | "unsigned"> {
  const signingSecret = await signingSecretOf(ctx, app);
  if (!signingSecret && !app.socket_mode_enabled) return "unsigned";
  return { app, url, signingSecret };
}

/** A channel as interaction payloads name it: a direct message is `directmessage`, as in Slack's. */
export const payloadChannel = (c: Pick<Channel, "id" | "is_direct" | "slug">) => ({
  id: c.id,
  name: appChannelName(c),
});

/**
 * An interaction's request: its route, and its payload with the fields every Slack interaction
 * payload carries (`token` is empty: apps verify the signature, as Bolt does).
 */
export const interactive = (route: AppRoute, payload: Record<string, unknown>): AppRequest => ({
  ...route,
  type: "interactive",
  payload: {
    token: "",
    api_app_id: route.app.id,
    is_enterprise_install: false,
    enterprise: null,
    ...payload,
  },
});

/** A slash command's request: its route, and its form fields as they are. */
export const slashCommand = (route: AppRoute, form: Record<string, string>): AppRequest => ({
  ...route,
  type: "slash_commands",
  payload: form,
});
