/**
 * The blocks Slack's agents write (decisions.md, "Slack's agents": "Markdown and new blocks"):
 * `markdown` (the text of a streamed reply), `context_actions` with `feedback_buttons` (pressed as
 * buttons are) and `icon_button`, `table`, and a plan of tasks (`plan`, `task_card`); each checked
 * with Slack's limits, and read as plain text where a message's text is made of its blocks.
 */
import { z } from "zod";
import { confirm, id, plainText } from "./block_elements.ts";
import { richText, richTextText } from "./rich_text.ts";

/** The longest `markdown` block, and a message's `markdown_text`. */
export const MAX_MARKDOWN = 12_000;

export const markdown = z.object({
  type: z.literal("markdown"),
  block_id: id.optional(),
  text: z.string().min(1).max(MAX_MARKDOWN),
});

const feedbackButton = z.object({
  text: plainText(75),
  accessibility_label: z.string().max(75).optional(),
  value: z.string().min(1).max(2_000),
});
export const feedbackButtons = z.object({
  type: z.literal("feedback_buttons"),
  action_id: id.optional(),
  positive_button: feedbackButton,
  negative_button: feedbackButton,
});
export const iconButton = z.object({
  type: z.literal("icon_button"),
  action_id: id.optional(),
  icon: z.string().min(1).max(100),
  text: plainText(75),
  accessibility_label: z.string().max(75).optional(),
  value: z.string().max(2_000).optional(),
  visible_to_user_ids: z.array(z.string()).max(100).optional(),
  confirm: confirm.optional(),
});
export const contextActions = z.object({
  type: z.literal("context_actions"),
  block_id: id.optional(),
  elements: z.array(z.discriminatedUnion("type", [feedbackButtons, iconButton])).min(1).max(5),
});

const cell = z.union([
  z.object({ type: z.literal("raw_text"), text: z.string().max(3_000) }),
  z.object({ type: z.literal("raw_number"), value: z.number(), text: z.string().max(3_000) }),
  richText,
]);
export const table = z.object({
  type: z.literal("table"),
  block_id: id.optional(),
  rows: z.array(z.array(cell).min(1).max(20)).min(1).max(100),
  column_settings: z.array(z.object({
    align: z.enum(["left", "center", "right"]).optional(),
    is_wrapped: z.boolean().optional(),
  })).max(20).optional(),
});

export const TASK_STATUSES = ["pending", "in_progress", "complete", "error"] as const;
const source = z.object({ type: z.literal("url"), url: z.url().max(3_000), text: z.string() });
export const taskCard = z.object({
  type: z.literal("task_card"),
  block_id: id.optional(),
  task_id: id,
  title: z.string().min(1).max(3_000),
  status: z.enum(TASK_STATUSES),
  details: richText.optional(),
  output: richText.optional(),
  sources: z.array(source).max(20).optional(),
});
export const plan = z.object({
  type: z.literal("plan"),
  block_id: id.optional(),
  title: z.string().max(3_000),
  tasks: z.array(taskCard).max(50).optional(),
});

/** The blocks of this module, for a message's union of blocks. */
export const agentBlocks = [markdown, contextActions, table, taskCard, plan] as const;

/** What each status looks like in a message's plain text. */
const MARKS: Record<(typeof TASK_STATUSES)[number], string> = {
  pending: "○",
  in_progress: "…",
  complete: "✓",
  error: "✗",
};

type TaskCard = z.infer<typeof taskCard>;

const taskText = (t: TaskCard) =>
  [
    `${MARKS[t.status]} ${t.title}`,
    ...[t.details, t.output].flatMap((r) => r ? [`  ${richTextText(r)}`] : []),
  ].join("\n");

/**
 * What one of these blocks says, as plain text (null for one that says nothing, and for any block
 * not of this module): its markdown, a table's rows, a plan's tasks.
 */
export function agentBlockText(block: Record<string, unknown>): string | null {
  switch (block.type) {
    case "markdown": {
      const parsed = markdown.safeParse(block);
      return parsed.success ? parsed.data.text : null;
    }
    case "table": {
      const parsed = table.safeParse(block);
      if (!parsed.success) return null;
      return parsed.data.rows.map((row) =>
        row.map((c) => c.type === "rich_text" ? richTextText(c) : c.text).join(" | ")
      ).join("\n");
    }
    case "task_card": {
      const parsed = taskCard.safeParse(block);
      return parsed.success ? taskText(parsed.data) : null;
    }
    case "plan": {
      const parsed = plan.safeParse(block);
      if (!parsed.success) return null;
      return [parsed.data.title, ...(parsed.data.tasks ?? []).map(taskText)].filter((l) => l)
        .join("\n");
    }
  }
  return null;
}
