/** An app's manifest written back from what it declares: `app:export`. */
import type { Declared } from "./manifest.ts";
import type { AgentView } from "../../core/app_records.ts";
import { INCOMING } from "./slack_scopes.ts";

/** An agent's view as a manifest writes it. */
const viewOf = (v: AgentView, kind: "assistant" | "agent") => ({
  [`${kind}_description`]: v.description,
  suggested_prompts: v.suggested_prompts,
});

/** An app's manifest, as `readManifest` reads it back into the same app. */
export function manifestOf(a: Declared): Record<string, unknown> {
  return {
    display_information: { name: a.name },
    features: {
      bot_user: { display_name: a.botName },
      ...(a.slashCommands.length > 0
        ? {
          slash_commands: a.slashCommands.map((c) => ({
            command: c.command,
            ...(c.url ? { url: c.url } : {}),
            description: c.description,
            ...(c.usage_hint ? { usage_hint: c.usage_hint } : {}),
          })),
        }
        : {}),
      ...(a.shortcuts.length > 0 ? { shortcuts: a.shortcuts } : {}),
      ...(a.appHome ? { app_home: a.appHome } : {}),
      ...(a.assistantView ? { assistant_view: viewOf(a.assistantView, "assistant") } : {}),
      ...(a.agentView ? { agent_view: viewOf(a.agentView, "agent") } : {}),
    },
    oauth_config: {
      redirect_urls: a.redirectUris,
      scopes: { bot: [...a.scopes, ...(a.incomingWebhook ? [INCOMING] : [])] },
    },
    settings: {
      ...(a.interactivity
        ? {
          interactivity: {
            is_enabled: a.interactivity.is_enabled,
            ...(a.interactivity.request_url ? { request_url: a.interactivity.request_url } : {}),
            ...(a.interactivity.message_menu_options_url
              ? { message_menu_options_url: a.interactivity.message_menu_options_url }
              : {}),
          },
        }
        : {}),
      ...(a.events || a.metadataSubscriptions.length > 0
        ? {
          event_subscriptions: {
            ...(a.events?.request_url ? { request_url: a.events.request_url } : {}),
            ...(a.events ? { bot_events: a.events.bot_events } : {}),
            ...(a.metadataSubscriptions.length > 0
              ? { metadata_subscriptions: a.metadataSubscriptions }
              : {}),
          },
        }
        : {}),
      ...(a.socketMode ? { socket_mode_enabled: true } : {}),
    },
  };
}
