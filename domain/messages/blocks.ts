/**
 * Blocks on messages and views (decisions.md, "Apps that listen"): the subset of Slack's Block Kit
 * apps write (`section`, `actions`, `context`, `divider`, `header`, and `input` in views; the
 * elements `button`, `static_select`, `overflow`, `plain_text_input`; `mrkdwn` and `plain_text`
 * text objects), with Slack's limits. A message without a body gets the blocks' plain text as its
 * body. An invalid block is refused with the JSON pointer of what is wrong.
 */
import { z } from "zod";
import { ApiError } from "../../core/errors.ts";
import type { Block } from "../../core/types.ts";
import { slackText } from "./slack_text.ts";

/** Slack's limits: blocks in a message, and in a view; characters in one text object. */
export const MAX_MESSAGE_BLOCKS = 50;
export const MAX_VIEW_BLOCKS = 100;
const MAX_TEXT = 3_000;

const text = z.object({
  type: z.enum(["plain_text", "mrkdwn"]),
  text: z.string().min(1).max(MAX_TEXT),
  emoji: z.boolean().optional(),
  verbatim: z.boolean().optional(),
});
const plainText = (max = MAX_TEXT) =>
  z.object({
    type: z.literal("plain_text"),
    text: z.string().min(1).max(max),
    emoji: z.boolean().optional(),
  });
const id = z.string().min(1).max(255);
const option = z.object({
  text: text,
  value: z.string().min(1).max(150),
  description: plainText(75).optional(),
});
const confirm = z.object({
  title: plainText(100),
  text: text,
  confirm: plainText(30),
  deny: plainText(30),
  style: z.enum(["primary", "danger"]).optional(),
});

const button = z.object({
  type: z.literal("button"),
  action_id: id.optional(),
  text: plainText(75),
  value: z.string().max(2_000).optional(),
  url: z.url().max(3_000).optional(),
  style: z.enum(["primary", "danger"]).optional(),
  confirm: confirm.optional(),
});
const staticSelect = z.object({
  type: z.literal("static_select"),
  action_id: id.optional(),
  placeholder: plainText(150).optional(),
  options: z.array(option).min(1).max(100),
  initial_option: option.optional(),
  confirm: confirm.optional(),
});
const overflow = z.object({
  type: z.literal("overflow"),
  action_id: id.optional(),
  options: z.array(option).min(1).max(5),
  confirm: confirm.optional(),
});
const textInput = z.object({
  type: z.literal("plain_text_input"),
  action_id: id.optional(),
  placeholder: plainText(150).optional(),
  initial_value: z.string().max(3_000).optional(),
  multiline: z.boolean().optional(),
  min_length: z.number().int().min(0).max(3_000).optional(),
  max_length: z.number().int().min(1).max(3_000).optional(),
});

const interactive = z.discriminatedUnion("type", [button, staticSelect, overflow]);

const section = z.object({
  type: z.literal("section"),
  block_id: id.optional(),
  text: text.optional(),
  fields: z.array(text).min(1).max(10).optional(),
  accessory: interactive.optional(),
}).refine((b) => b.text !== undefined || b.fields !== undefined, {
  message: "a section needs text or fields",
});
const actions = z.object({
  type: z.literal("actions"),
  block_id: id.optional(),
  elements: z.array(interactive).min(1).max(25),
});
const context = z.object({
  type: z.literal("context"),
  block_id: id.optional(),
  elements: z.array(text).min(1).max(10),
});
const divider = z.object({ type: z.literal("divider"), block_id: id.optional() });
const header = z.object({
  type: z.literal("header"),
  block_id: id.optional(),
  text: plainText(150),
});
const input = z.object({
  type: z.literal("input"),
  block_id: id.optional(),
  label: plainText(2_000),
  element: z.discriminatedUnion("type", [textInput, staticSelect]),
  hint: plainText(2_000).optional(),
  optional: z.boolean().optional(),
  dispatch_action: z.boolean().optional(),
});

const messageBlock = z.discriminatedUnion("type", [section, actions, context, divider, header]);
const viewBlock = z.discriminatedUnion("type", [section, actions, context, divider, header, input]);

/** An element a person can press or pick from. */
export type ActionElement = z.infer<typeof interactive>;

/** The JSON pointer of a zod issue's path under `field`. */
const pointer = (field: string, path: PropertyKey[]) =>
  `/${
    [field, ...path.map(String)].map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/")
  }`;

/**
 * The blocks a request gave, checked (null when it gave none), or the 422 on `field` whose
 * messages name each fault by its JSON pointer (`/blocks/0/text/text: ...`).
 */
export function parseBlocks(
  value: unknown,
  { field = "blocks", view = false }: { field?: string; view?: boolean } = {},
): Block[] | null {
  if (value === undefined || value === null) return null;
  const max = view ? MAX_VIEW_BLOCKS : MAX_MESSAGE_BLOCKS;
  const schema = z.array(view ? viewBlock : messageBlock).max(max);
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data as Block[];
  const faults = parsed.error.issues.slice(0, 10).map((issue) =>
    `${pointer(field, issue.path)}: ${
      issue.code === "invalid_union"
        ? "an unknown or unsupported block or element type"
        : issue.message
    }`
  );
  throw new ApiError(422, `The ${field} are not valid Block Kit: ${faults[0]}`, {
    [field]: faults,
  });
}

/**
 * The blocks if they are all of the subset the service keeps, else null: an incoming webhook
 * takes every payload Slack documents, and keeps its blocks only where the service can.
 */
export function supportedBlocks(value: unknown): Block[] | null {
  try {
    return parseBlocks(value);
  } catch {
    return null;
  }
}

/** What the blocks say, as plain text: a message's body when it was sent blocks alone. */
export function blocksText(blocks: Block[]): string {
  try {
    return slackText({ blocks });
  } catch {
    return "";
  }
}
