/**
 * A manifest's request URLs, read from its text as it is, before or without the schema: which it
 * lacks (where the service would send things, unless Socket Mode carries them) and which the
 * service will call, each by JSON pointer, so that no other fault hides them.
 */
import { isBotEvent } from "../../core/app_records.ts";
import { parseText } from "./manifest_text.ts";

/** A manifest's parts as the request-URL rule reads them, before or without the schema. */
interface Loose {
  features?: { slash_commands?: { url?: unknown }[] };
  settings?: {
    socket_mode_enabled?: unknown;
    interactivity?: { is_enabled?: unknown; request_url?: unknown };
    event_subscriptions?: { request_url?: unknown; bot_events?: unknown };
  };
}

/**
 * The request URLs a manifest lacks, by JSON pointer: where the service sends things, unless
 * Socket Mode carries them. Read apart from the schema, so its faults never hide these.
 */
export function missingUrls(value: unknown): string[] {
  const m = (typeof value === "object" && value !== null ? value : {}) as Loose;
  if (m.settings?.socket_mode_enabled === true) return [];
  const out: string[] = [];
  const commands = Array.isArray(m.features?.slash_commands) ? m.features.slash_commands : [];
  commands.forEach((c, i) => {
    if (!c?.url) out.push(`/features/slash_commands/${i}/url: required (or socket_mode_enabled)`);
  });
  const i = m.settings?.interactivity;
  if (i?.is_enabled === true && !i.request_url) {
    out.push("/settings/interactivity/request_url: required when interactivity is enabled");
  }
  const e = m.settings?.event_subscriptions;
  const events = Array.isArray(e?.bot_events) ? e.bot_events : [];
  if (events.some((x) => typeof x === "string" && isBotEvent(x)) && !e?.request_url) {
    out.push("/settings/event_subscriptions/request_url: required for bot_events");
  }
  return out;
}

/**
 * The URLs the service will call, by JSON pointer, read from the text as it is (whatever else is
 * wrong with it): none in Socket Mode, whose request URLs are kept but never called.
 */
export function requestUrls(text: string): [string, string][] {
  let value: unknown;
  try {
    value = parseText(text);
  } catch {
    return [];
  }
  const m = (typeof value === "object" && value !== null ? value : {}) as Loose & {
    settings?: { interactivity?: { message_menu_options_url?: unknown } };
  };
  if (m.settings?.socket_mode_enabled === true) return [];
  const commands = Array.isArray(m.features?.slash_commands) ? m.features.slash_commands : [];
  const found: [string, unknown][] = [
    ...commands.map((c, i) => [`/features/slash_commands/${i}/url`, c?.url] as [string, unknown]),
    ["/settings/interactivity/request_url", m.settings?.interactivity?.request_url],
    [
      "/settings/interactivity/message_menu_options_url",
      m.settings?.interactivity?.message_menu_options_url,
    ],
    ["/settings/event_subscriptions/request_url", m.settings?.event_subscriptions?.request_url],
  ];
  return found.filter((f): f is [string, string] => typeof f[1] === "string" && f[1] !== "");
}
