/**
 * What an app declares (decisions.md, "Apps that listen"): the subset of Slack's app manifest the
 * service reads, as JSON or YAML. Invalid fields refuse the whole manifest with every fault and
 * its JSON pointer, writing nothing; unknown fields are ignored with a warning. Scopes may be ours
 * or Slack's where one maps (docs/apps.md holds the table); `incoming-webhook` asks for a hook.
 */
import { z } from "zod";
import { ApiError } from "../../core/errors.ts";
import { type Scope, SCOPES } from "../../core/types.ts";
import { INCOMING, SLACK_OPEN, SLACK_SCOPES, SLACK_UNGRANTED } from "./slack_scopes.ts";
import { parseText } from "./manifest_text.ts";
import { missingUrls } from "./manifest_urls.ts";
import {
  type AgentView,
  type AppHome,
  type BotEvent,
  type Interactivity,
  isBotEvent,
  type MetadataSubscription,
  type Shortcut,
  type SlashCommand,
  type SuggestedPrompt,
} from "../../core/app_records.ts";

/** What a manifest says of an app, as the service keeps it. */
export interface Declared {
  name: string;
  botName: string;
  redirectUris: string[];
  scopes: Scope[];
  incomingWebhook: boolean;
  slashCommands: SlashCommand[];
  interactivity: Interactivity | null;
  events: { request_url: string | null; bot_events: BotEvent[] } | null;
  /** Socket Mode: events, commands and interactions go over the app's connections. */
  socketMode: boolean;
  appHome: AppHome | null;
  shortcuts: Shortcut[];
  assistantView: AgentView | null;
  agentView: AgentView | null;
  metadataSubscriptions: MetadataSubscription[];
}

const url = z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" })
  .max(2048);
const command = z.object({
  command: z.string().regex(/^\/[a-z0-9_-]{1,31}$/, "must be / and 1-31 of a-z 0-9 _ -"),
  url: url.optional(),
  description: z.string().min(1).max(2000),
  usage_hint: z.string().max(1000).optional(),
  should_escape: z.boolean().optional(),
});
const scope = z.string().refine(
  (s) =>
    s === INCOMING || (SCOPES as readonly string[]).includes(s) || SLACK_SCOPES.has(s) ||
    SLACK_UNGRANTED.has(s) || SLACK_OPEN.has(s),
  { error: (issue) => `unknown scope ${issue.input}` },
);
/** An agent's view (`assistant_view`, `agent_view`): its description, its first prompts. */
const agentView = (description: string) =>
  z.object({
    [description]: z.string().max(1_000).optional(),
    suggested_prompts: z.array(z.object({
      title: z.string().min(1).max(200),
      message: z.string().min(1).max(4_000),
    })).max(4).optional(),
  });

/** Each part checked on its own, so one fault does not hide another's. */
const schema = z.object({
  display_information: z.object({ name: z.string().min(1).max(35) }),
  features: z.object({
    bot_user: z.object({
      display_name: z.string().min(1).max(80),
      always_online: z.boolean().optional(),
    }).optional(),
    slash_commands: z.array(command).max(50).superRefine((commands, ctx) => {
      commands.forEach((c, i) => {
        if (commands.findIndex((o) => o.command === c.command) === i) return;
        ctx.addIssue({
          code: "custom",
          path: [i, "command"],
          message: `${c.command} is declared twice`,
        });
      });
    }).optional(),
    shortcuts: z.array(z.object({
      name: z.string().min(1).max(24),
      type: z.enum(["global", "message"]),
      callback_id: z.string().min(1).max(255),
      description: z.string().min(1).max(150),
    })).max(20).superRefine((shortcuts, ctx) => {
      shortcuts.forEach((s, i) => {
        if (shortcuts.findIndex((o) => o.callback_id === s.callback_id) === i) return;
        ctx.addIssue({
          code: "custom",
          path: [i, "callback_id"],
          message: `${s.callback_id} is declared twice`,
        });
      });
    }).optional(),
    app_home: z.object({
      home_tab_enabled: z.boolean().optional(),
      messages_tab_enabled: z.boolean().optional(),
      messages_tab_read_only_enabled: z.boolean().optional(),
    }).optional(),
    assistant_view: agentView("assistant_description").optional(),
    agent_view: agentView("agent_description").optional(),
  }).optional(),
  oauth_config: z.object({
    redirect_urls: z.array(url).max(1000).optional(),
    scopes: z.object({ bot: z.array(scope).max(255).optional() }).optional(),
  }).optional(),
  settings: z.object({
    interactivity: z.object({
      is_enabled: z.boolean(),
      request_url: url.optional(),
      message_menu_options_url: url.optional(),
    }).optional(),
    event_subscriptions: z.object({
      request_url: url.optional(),
      bot_events: z.array(z.string()).max(100).optional(),
      metadata_subscriptions: z.array(z.object({
        app_id: z.string().min(1).max(64),
        event_type: z.string().regex(/^[A-Za-z0-9_.-]{1,255}$/, "must be a metadata event type"),
      })).max(50).optional(),
    }).optional(),
    socket_mode_enabled: z.boolean().optional(),
  }).optional(),
});

/** The manifest's parts the service reads, by JSON pointer: anything else is only warned of. */
const KNOWN = [
  "/display_information/name",
  "/features/bot_user/display_name",
  "/features/bot_user/always_online",
  "/features/slash_commands",
  "/features/shortcuts",
  "/features/app_home/home_tab_enabled",
  "/features/app_home/messages_tab_enabled",
  "/features/assistant_view",
  "/features/agent_view",
  "/settings/event_subscriptions/metadata_subscriptions",
  "/oauth_config/redirect_urls",
  "/oauth_config/scopes/bot",
  "/settings/interactivity",
  "/settings/event_subscriptions/request_url",
  "/settings/event_subscriptions/bot_events",
  "/settings/socket_mode_enabled",
];

const pointer = (path: PropertyKey[]) =>
  `/${path.map((p) => String(p).replaceAll("~", "~0").replaceAll("/", "~1")).join("/")}`;

/** The 422 on `manifest` naming every fault, each by its JSON pointer, in one line and listed. */
export const manifestInvalid = (faults: string[]) =>
  new ApiError(422, `The manifest is not valid: ${faults.join("; ")}`, { manifest: faults });

/** The faults a 422 of `readManifest` lists; anything else is rethrown. */
export function faultsOf(e: unknown): string[] {
  const listed = e instanceof ApiError && e.status === 422 ? e.errors?.manifest : undefined;
  if (!listed) throw e;
  return listed;
}

/** The pointers of what `value` holds that the service does not read. */
function unknownFields(value: unknown, at = ""): string[] {
  if (KNOWN.some((k) => at === k || at.startsWith(`${k}/`))) return [];
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return KNOWN.some((k) => k.startsWith(`${at}/`)) ? [] : [at];
  }
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const here = `${at}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
    if (KNOWN.some((k) => k === here || k.startsWith(`${here}/`) || here.startsWith(`${k}/`))) {
      out.push(...unknownFields(v, here));
    } else out.push(here);
  }
  return out;
}

/** An agent's view as the app keeps it; null where the manifest has none. */
function viewOf(
  view: { suggested_prompts?: SuggestedPrompt[] } & Record<string, unknown> | undefined,
  description: string,
): AgentView | null {
  if (!view) return null;
  const text = view[description];
  return {
    description: typeof text === "string" ? text : "",
    suggested_prompts: view.suggested_prompts ?? [],
  };
}

/** Our scopes for the manifest's (each known: the schema checked). */
function scopesOf(asked: string[]): { scopes: Scope[]; incoming: boolean } {
  const granted = new Set<Scope>();
  for (const s of asked) {
    if (s === INCOMING || SLACK_UNGRANTED.has(s) || SLACK_OPEN.has(s)) continue;
    granted.add(SLACK_SCOPES.get(s) ?? s as Scope);
  }
  return { scopes: SCOPES.filter((s) => granted.has(s)), incoming: asked.includes(INCOMING) };
}

/**
 * The app a manifest declares, with the warnings of what it held that is ignored; or the 422 on
 * `manifest` listing every fault by its JSON pointer.
 */
export function readManifest(text: string): { declared: Declared; warnings: string[] } {
  const value = parseText(text);
  const parsed = schema.safeParse(value);
  const faults = [
    ...(parsed.success ? [] : parsed.error.issues.map((i) => `${pointer(i.path)}: ${i.message}`)),
    ...missingUrls(value).filter((f) =>
      parsed.success || !parsed.error.issues.some((i) => f.startsWith(`${pointer(i.path)}:`))
    ),
  ];
  if (!parsed.success || faults.length > 0) throw manifestInvalid(faults);
  const m = parsed.data;
  const { scopes, incoming } = scopesOf(m.oauth_config?.scopes?.bot ?? []);
  const commands = m.features?.slash_commands ?? [];
  const interactivity = m.settings?.interactivity;
  const events = m.settings?.event_subscriptions;
  const socketMode = m.settings?.socket_mode_enabled ?? false;
  const botEvents = [...new Set((events?.bot_events ?? []).filter(isBotEvent))];
  const declared: Declared = {
    name: m.display_information.name,
    botName: m.features?.bot_user?.display_name ?? m.display_information.name,
    redirectUris: m.oauth_config?.redirect_urls ?? [],
    scopes,
    incomingWebhook: incoming,
    slashCommands: commands.map((c) => ({
      command: c.command,
      url: c.url ?? null,
      description: c.description,
      usage_hint: c.usage_hint ?? "",
    })),
    interactivity: interactivity
      ? {
        is_enabled: interactivity.is_enabled,
        request_url: interactivity.request_url ?? null,
        ...(interactivity.message_menu_options_url
          ? { message_menu_options_url: interactivity.message_menu_options_url }
          : {}),
      }
      : null,
    events: events?.request_url || (socketMode && botEvents.length > 0)
      ? { request_url: events?.request_url ?? null, bot_events: botEvents }
      : null,
    socketMode,
    shortcuts: m.features?.shortcuts ?? [],
    assistantView: viewOf(m.features?.assistant_view, "assistant_description"),
    agentView: viewOf(m.features?.agent_view, "agent_description"),
    metadataSubscriptions: events?.metadata_subscriptions ?? [],
    appHome: m.features?.app_home
      ? {
        home_tab_enabled: m.features.app_home.home_tab_enabled ?? false,
        messages_tab_enabled: m.features.app_home.messages_tab_enabled ?? false,
      }
      : null,
  };
  const unknownEvents = (events?.bot_events ?? []).flatMap((e, i) =>
    isBotEvent(e) ? [] : [`/settings/event_subscriptions/bot_events/${i}: ${e} is not sent here`]
  );
  const ungranted = (m.oauth_config?.scopes?.bot ?? []).flatMap((s, i) =>
    SLACK_UNGRANTED.has(s) ? [`/oauth_config/scopes/bot/${i}: ${s} is not granted here`] : []
  );
  const ignored = unknownFields(value).map((p) => `${p}: ignored`);
  const notHere = [...unknownEvents, ...ungranted].map((w) => `${w}: ignored`);
  return { declared, warnings: [...ignored, ...notHere] };
}
