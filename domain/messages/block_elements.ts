/**
 * Block Kit's elements as the service takes them (decisions.md, "More of Block Kit"), with
 * Slack's limits: where each may stand is said by the unions at the end, as Slack's reference
 * lists them (a section's accessory, an actions block, an input, a context block).
 */
import { z } from "zod";

const MAX_TEXT = 3_000;

export const text = z.object({
  type: z.enum(["plain_text", "mrkdwn"]),
  text: z.string().min(1).max(MAX_TEXT),
  emoji: z.boolean().optional(),
  verbatim: z.boolean().optional(),
});
export const plainText = (max = MAX_TEXT) =>
  z.object({
    type: z.literal("plain_text"),
    text: z.string().min(1).max(max),
    emoji: z.boolean().optional(),
  });
export const id = z.string().min(1).max(255);
const option = z.object({
  text: text,
  value: z.string().min(1).max(150),
  description: plainText(75).optional(),
  url: z.url().max(3_000).optional(),
});
const optionGroup = z.object({
  label: plainText(75),
  options: z.array(option).min(1).max(100),
});
export const confirm = z.object({
  title: plainText(100),
  text: text,
  confirm: plainText(30),
  deny: plainText(30),
  style: z.enum(["primary", "danger"]).optional(),
});
const url = z.url().max(3_000);

/** What every interactive element may carry. */
const acting = {
  action_id: id.optional(),
  confirm: confirm.optional(),
  focus_on_load: z.boolean().optional(),
};
const placeholder = plainText(150).optional();

const button = z.object({
  type: z.literal("button"),
  ...acting,
  text: plainText(75),
  value: z.string().max(2_000).optional(),
  url: url.optional(),
  style: z.enum(["primary", "danger"]).optional(),
  accessibility_label: z.string().max(75).optional(),
});
const overflow = z.object({
  type: z.literal("overflow"),
  ...acting,
  options: z.array(option).min(1).max(5),
});

/** A menu's choices: options, or options in groups (a static menu takes either). */
const choices = {
  options: z.array(option).min(1).max(100).optional(),
  option_groups: z.array(optionGroup).min(1).max(100).optional(),
};
const hasChoices = (e: { options?: unknown; option_groups?: unknown }) =>
  (e.options === undefined) !== (e.option_groups === undefined);
const oneOfChoices = { message: "a static menu needs options or option_groups (one of them)" };
const staticSelect = z.object({
  type: z.literal("static_select"),
  ...acting,
  placeholder,
  ...choices,
  initial_option: option.optional(),
}).refine(hasChoices, oneOfChoices);
const multiStaticSelect = z.object({
  type: z.literal("multi_static_select"),
  ...acting,
  placeholder,
  ...choices,
  initial_options: z.array(option).optional(),
  max_selected_items: z.number().int().min(1).optional(),
}).refine(hasChoices, oneOfChoices);
const externalSelect = z.object({
  type: z.literal("external_select"),
  ...acting,
  placeholder,
  initial_option: option.optional(),
  min_query_length: z.number().int().min(0).optional(),
});
const multiExternalSelect = z.object({
  type: z.literal("multi_external_select"),
  ...acting,
  placeholder,
  initial_options: z.array(option).optional(),
  min_query_length: z.number().int().min(0).optional(),
  max_selected_items: z.number().int().min(1).optional(),
});

const conversationFilter = z.object({
  include: z.array(z.enum(["im", "mpim", "private", "public"])).min(1).optional(),
  exclude_external_shared_channels: z.boolean().optional(),
  exclude_bot_users: z.boolean().optional(),
});
const usersSelect = z.object({
  type: z.literal("users_select"),
  ...acting,
  placeholder,
  initial_user: id.optional(),
});
const multiUsersSelect = z.object({
  type: z.literal("multi_users_select"),
  ...acting,
  placeholder,
  initial_users: z.array(id).optional(),
  max_selected_items: z.number().int().min(1).optional(),
});
const conversationsSelect = z.object({
  type: z.literal("conversations_select"),
  ...acting,
  placeholder,
  initial_conversation: id.optional(),
  default_to_current_conversation: z.boolean().optional(),
  response_url_enabled: z.boolean().optional(),
  filter: conversationFilter.optional(),
});
const multiConversationsSelect = z.object({
  type: z.literal("multi_conversations_select"),
  ...acting,
  placeholder,
  initial_conversations: z.array(id).optional(),
  default_to_current_conversation: z.boolean().optional(),
  max_selected_items: z.number().int().min(1).optional(),
  filter: conversationFilter.optional(),
});
const channelsSelect = z.object({
  type: z.literal("channels_select"),
  ...acting,
  placeholder,
  initial_channel: id.optional(),
  response_url_enabled: z.boolean().optional(),
});
const multiChannelsSelect = z.object({
  type: z.literal("multi_channels_select"),
  ...acting,
  placeholder,
  initial_channels: z.array(id).optional(),
  max_selected_items: z.number().int().min(1).optional(),
});

const datepicker = z.object({
  type: z.literal("datepicker"),
  ...acting,
  placeholder,
  initial_date: z.iso.date().optional(),
});
const timepicker = z.object({
  type: z.literal("timepicker"),
  ...acting,
  placeholder,
  initial_time: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "a time as HH:mm").optional(),
  timezone: z.string().max(100).optional(),
});
const checkboxes = z.object({
  type: z.literal("checkboxes"),
  ...acting,
  options: z.array(option).min(1).max(10),
  initial_options: z.array(option).optional(),
});
const radioButtons = z.object({
  type: z.literal("radio_buttons"),
  ...acting,
  options: z.array(option).min(1).max(10),
  initial_option: option.optional(),
});

const dispatchConfig = z.object({
  trigger_actions_on: z.array(z.enum(["on_enter_pressed", "on_character_entered"])).min(1)
    .optional(),
});
const textInput = z.object({
  type: z.literal("plain_text_input"),
  ...acting,
  placeholder,
  initial_value: z.string().max(MAX_TEXT).optional(),
  multiline: z.boolean().optional(),
  min_length: z.number().int().min(0).max(MAX_TEXT).optional(),
  max_length: z.number().int().min(1).max(MAX_TEXT).optional(),
  dispatch_action_config: dispatchConfig.optional(),
});
const emailInput = z.object({
  type: z.literal("email_text_input"),
  ...acting,
  placeholder,
  initial_value: z.email().max(320).optional(),
  dispatch_action_config: dispatchConfig.optional(),
});
const urlInput = z.object({
  type: z.literal("url_text_input"),
  ...acting,
  placeholder,
  initial_value: url.optional(),
  dispatch_action_config: dispatchConfig.optional(),
});
const number = z.string().regex(/^-?\d+(\.\d+)?$/, "a number, as text");
const numberInput = z.object({
  type: z.literal("number_input"),
  ...acting,
  placeholder,
  is_decimal_allowed: z.boolean(),
  initial_value: number.optional(),
  min_value: number.optional(),
  max_value: number.optional(),
  dispatch_action_config: dispatchConfig.optional(),
});

export const image = z.object({
  type: z.literal("image"),
  image_url: url,
  alt_text: z.string().min(1).max(2_000),
});

/** Menus and pickers: a choice the person makes. */
const pickers = [
  staticSelect,
  multiStaticSelect,
  externalSelect,
  multiExternalSelect,
  usersSelect,
  multiUsersSelect,
  conversationsSelect,
  multiConversationsSelect,
  channelsSelect,
  multiChannelsSelect,
  datepicker,
  timepicker,
  checkboxes,
  radioButtons,
] as const;
const textInputs = [textInput, emailInput, urlInput, numberInput] as const;

/** An `actions` block's elements. */
export const actionElement = z.discriminatedUnion("type", [button, overflow, ...pickers]);
/** A section's accessory: what an actions block takes, or an image. */
export const accessory = z.discriminatedUnion("type", [button, overflow, ...pickers, image]);
/** An `input` block's element. */
export const inputElement = z.discriminatedUnion("type", [...textInputs, ...pickers]);

/** An element a person can press or pick from, or type into (or an agent's, to rate it). */
export type Element =
  | z.infer<typeof actionElement>
  | z.infer<typeof inputElement>
  | ContextAction;

/** A `context_actions` block's elements (domain/messages/agent_blocks.ts), as pressed. */
export type ContextAction =
  | {
    type: "feedback_buttons";
    action_id?: string;
    positive_button: { value: string; text: unknown };
    negative_button: { value: string; text: unknown };
  }
  | { type: "icon_button"; action_id?: string; value?: string; text: unknown };
