/**
 * Blocks on messages and views (decisions.md, "Apps that listen", "More of Block Kit"): Slack's
 * `section`, `actions`, `context`, `divider`, `header`, `image`, `rich_text`, and `input` in
 * views, with the elements of domain/messages/block_elements.ts and Slack's limits. A message
 * without a body gets the blocks' plain text as its body. An invalid block is refused with the
 * JSON pointer of what is wrong.
 */
import { z } from "zod";
import { ApiError } from "../../core/errors.ts";
import type { Attachment, Block } from "../../core/types.ts";
import { slackMarkup } from "./slack_text.ts";
import {
  accessory,
  actionElement,
  type Element,
  id,
  image,
  inputElement,
  plainText,
  text,
} from "./block_elements.ts";
import { richText } from "./rich_text.ts";
import { agentBlocks } from "./agent_blocks.ts";

/** Slack's limits: blocks in a message, and in a view. */
export const MAX_MESSAGE_BLOCKS = 50;
export const MAX_VIEW_BLOCKS = 100;

const section = z.object({
  type: z.literal("section"),
  block_id: id.optional(),
  text: text.optional(),
  fields: z.array(text).min(1).max(10).optional(),
  accessory: accessory.optional(),
}).refine((b) => b.text !== undefined || b.fields !== undefined, {
  message: "a section needs text or fields",
});
const actions = z.object({
  type: z.literal("actions"),
  block_id: id.optional(),
  elements: z.array(actionElement).min(1).max(25),
});
const context = z.object({
  type: z.literal("context"),
  block_id: id.optional(),
  elements: z.array(z.union([text, image])).min(1).max(10),
});
const divider = z.object({ type: z.literal("divider"), block_id: id.optional() });
const header = z.object({
  type: z.literal("header"),
  block_id: id.optional(),
  text: plainText(150),
});
const imageBlock = z.object({
  ...image.shape,
  block_id: id.optional(),
  title: plainText(2_000).optional(),
});
const input = z.object({
  type: z.literal("input"),
  block_id: id.optional(),
  label: plainText(2_000),
  element: inputElement,
  hint: plainText(2_000).optional(),
  optional: z.boolean().optional(),
  dispatch_action: z.boolean().optional(),
});

const messageBlock = z.discriminatedUnion("type", [
  section,
  actions,
  context,
  divider,
  header,
  imageBlock,
  richText,
  ...agentBlocks,
]);
const viewBlock = z.discriminatedUnion("type", [
  section,
  actions,
  context,
  divider,
  header,
  imageBlock,
  richText,
  input,
]);

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

/**
 * What the blocks (and attachments) say, in Slack's markup as a body is written: a message's body
 * when it was sent them alone, whose `text` then names the people and channels it mentions.
 */
export function blocksText(
  { blocks, attachments }: { blocks: Block[] | null; attachments?: Attachment[] | null },
): string {
  try {
    return slackMarkup({ blocks: blocks ?? [], attachments: attachments ?? [] });
  } catch {
    return "";
  }
}

export interface Found {
  blockId: string;
  element: Element;
}

/**
 * The elements of blocks a person may press or pick from: those of `actions` blocks, sections'
 * accessories (an image is not one), and the inputs of a view that dispatch their actions.
 */
export function pressableElements(blocks: Block[]): Found[] {
  return blocks.flatMap((b, i) => {
    const blockId = b.block_id ?? `block-${i}`;
    const inside = b.type === "actions"
      ? (b.elements as Element[])
      : b.type === "section" && b.accessory && (b.accessory as { type: string }).type !== "image"
      ? [b.accessory as Element]
      : b.type === "input" && b.dispatch_action
      ? [b.element as Element]
      : b.type === "context_actions"
      ? (b.elements as Element[])
      : [];
    return inside.map((element) => ({ blockId, element }));
  });
}
