/**
 * Slack's `rich_text` block, what its own clients send with every message: sections, lists,
 * preformatted text and quotes of inline pieces (text with its style, links, mentions, emoji).
 * Kept as sent; its plain text is what a message made of it alone says.
 */
import { z } from "zod";

const style = z.object({
  bold: z.boolean().optional(),
  italic: z.boolean().optional(),
  strike: z.boolean().optional(),
  code: z.boolean().optional(),
  underline: z.boolean().optional(),
}).optional();
const id = z.string().min(1).max(255);

const inline = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string().max(3_000), style }),
  z.object({
    type: z.literal("link"),
    url: z.url().max(3_000),
    text: z.string().max(3_000).optional(),
    unsafe: z.boolean().optional(),
    style,
  }),
  z.object({ type: z.literal("user"), user_id: id, style }),
  z.object({ type: z.literal("channel"), channel_id: id, style }),
  z.object({ type: z.literal("usergroup"), usergroup_id: id, style }),
  z.object({
    type: z.literal("emoji"),
    name: z.string().min(1).max(100),
    unicode: z.string().max(100).optional(),
  }),
  z.object({ type: z.literal("broadcast"), range: z.enum(["here", "channel", "everyone"]) }),
  z.object({
    type: z.literal("date"),
    timestamp: z.number().int(),
    format: z.string().max(1_000),
    url: z.url().max(3_000).optional(),
    fallback: z.string().max(1_000).optional(),
  }),
  z.object({ type: z.literal("color"), value: z.string().max(20) }),
]);
const inlines = z.array(inline).max(1_000);
const border = z.number().int().min(0).max(1).optional();

const section = z.object({ type: z.literal("rich_text_section"), elements: inlines });
const list = z.object({
  type: z.literal("rich_text_list"),
  style: z.enum(["bullet", "ordered"]),
  elements: z.array(section).max(1_000),
  indent: z.number().int().min(0).max(8).optional(),
  offset: z.number().int().min(0).optional(),
  border,
});
const preformatted = z.object({
  type: z.literal("rich_text_preformatted"),
  elements: inlines,
  border,
});
const quote = z.object({ type: z.literal("rich_text_quote"), elements: inlines, border });

export const richText = z.object({
  type: z.literal("rich_text"),
  block_id: id.optional(),
  elements: z.array(z.discriminatedUnion("type", [section, list, preformatted, quote])).min(1)
    .max(100),
});

type Inline = z.infer<typeof inline>;
type RichText = z.infer<typeof richText>;

/** One inline piece as Slack's markup: mentions stay markup, for the body's usual rendering. */
function inlineText(e: Inline): string {
  switch (e.type) {
    case "text":
      return e.text;
    case "link":
      return e.text ? `<${e.url}|${e.text}>` : `<${e.url}>`;
    case "user":
      return `<@${e.user_id}>`;
    case "channel":
      return `<#${e.channel_id}>`;
    case "usergroup":
      return `<!subteam^${e.usergroup_id}>`;
    case "emoji":
      return `:${e.name}:`;
    case "broadcast":
      return `<!${e.range}>`;
    case "date":
      return e.fallback ?? new Date(e.timestamp * 1000).toISOString();
    case "color":
      return e.value;
  }
}

const line = (elements: Inline[]) => elements.map(inlineText).join("");

/** A rich_text block's text, a line per section or list item, lists marked as Slack shows them. */
export function richTextText(block: RichText): string {
  return block.elements.map((e) => {
    if (e.type !== "rich_text_list") return line(e.elements);
    return e.elements.map((item, i) =>
      `${"  ".repeat(e.indent ?? 0)}${
        e.style === "ordered" ? `${(e.offset ?? 0) + i + 1}.` : "•"
      } ${line(item.elements)}`
    ).join("\n");
  }).join("\n");
}
