/**
 * What a streamed reply looks like (decisions.md, "Slack's agents": "Streamed replies"): its
 * chunks so far as a message's blocks (its text a `markdown` block; its tasks a `task_card` each,
 * or one `plan`; the blocks its chunks added) and their plain text as its body.
 */
import { z } from "zod";
import type { Block } from "../../core/types.ts";
import type { MessageStream, StreamTask } from "../../core/stream_records.ts";
import { invalid } from "../../core/errors.ts";
import { MAX_MARKDOWN, TASK_STATUSES } from "./agent_blocks.ts";
import { parseBlocks } from "./blocks.ts";
import { slackMarkup } from "./slack_text.ts";
import { MAX_BODY_CHARS } from "./body.ts";

const chunk = z.discriminatedUnion("type", [
  z.object({ type: z.literal("markdown_text"), text: z.string().max(MAX_MARKDOWN) }),
  z.object({
    type: z.literal("task_update"),
    id: z.string().min(1).max(255),
    title: z.string().min(1).max(3_000),
    status: z.enum(TASK_STATUSES),
    details: z.string().max(3_000).optional(),
    output: z.string().max(3_000).optional(),
    sources: z.array(z.unknown()).max(20).optional(),
  }),
  z.object({ type: z.literal("plan_update"), title: z.string().max(3_000) }),
  z.object({ type: z.literal("blocks"), blocks: z.array(z.unknown()).max(50) }),
]);

/** A call's chunks, checked; the 422 on `chunks` names each fault by its JSON pointer. */
export function parseChunks(value: unknown): z.infer<typeof chunk>[] {
  if (value === undefined || value === null) return [];
  const parsed = z.array(chunk).max(100).safeParse(value);
  if (parsed.success) return parsed.data;
  const faults = parsed.error.issues.slice(0, 10).map((i) =>
    `/chunks/${i.path.join("/")}: ${i.message}`
  );
  throw invalid("chunks", `The chunks are not valid: ${faults.join("; ")}`);
}

/** The stream with `markdownText` and then `chunks` added, in order. */
export function withChunks(
  s: MessageStream,
  { markdownText, chunks }: { markdownText?: string; chunks: z.infer<typeof chunk>[] },
): MessageStream {
  let next = { ...s, text: s.text + (markdownText ?? "") };
  for (const c of chunks) {
    if (c.type === "markdown_text") next = { ...next, text: next.text + c.text };
    else if (c.type === "plan_update") next = { ...next, plan_title: c.title };
    else if (c.type === "blocks") {
      next = { ...next, blocks: [...next.blocks, ...parseBlocks(c.blocks, { field: "chunks" })!] };
    } else next = { ...next, tasks: withTask(next.tasks, c) };
  }
  return next;
}

/** The tasks with `t` updated in place, or added last. */
function withTask(tasks: StreamTask[], t: StreamTask & { sources?: unknown }): StreamTask[] {
  const task: StreamTask = {
    id: t.id,
    title: t.title,
    status: t.status,
    ...(t.details ? { details: t.details } : {}),
    ...(t.output ? { output: t.output } : {}),
  };
  return tasks.some((o) => o.id === t.id)
    ? tasks.map((o) => o.id === t.id ? task : o)
    : [...tasks, task];
}

/** Text as a `rich_text` block, for a task's details and output. */
const richTextOf = (text: string) => ({
  type: "rich_text",
  elements: [{ type: "rich_text_section", elements: [{ type: "text", text }] }],
});

const cardOf = (t: StreamTask): Block => ({
  type: "task_card",
  task_id: t.id,
  title: t.title,
  status: t.status,
  ...(t.details ? { details: richTextOf(t.details) } : {}),
  ...(t.output ? { output: richTextOf(t.output) } : {}),
});

/**
 * The message the stream makes, with `closing` blocks after (a stop's): its blocks, and their
 * text as its body; the 422 on `field` when that text is past a message's 10,000 characters.
 */
export function rendered(
  s: MessageStream,
  { closing = [], field = "markdown_text" }: { closing?: Block[]; field?: string } = {},
): { body: string; blocks: Block[] } {
  const tasks = s.tasks.length === 0
    ? []
    : s.mode === "plan"
    ? [{ type: "plan", title: s.plan_title ?? "", tasks: s.tasks.map(cardOf) }]
    : s.tasks.map(cardOf);
  const blocks: Block[] = [
    ...(s.text ? [{ type: "markdown", text: s.text }] : []),
    ...tasks,
    ...s.blocks,
    ...closing,
  ];
  const body = textOf(blocks);
  if ([...body].length > MAX_BODY_CHARS) {
    throw invalid(field, `A streamed reply may say at most ${MAX_BODY_CHARS} characters.`);
  }
  return { body, blocks };
}

/** What the blocks say, as a body is written; `""` for blocks that say nothing (yet). */
function textOf(blocks: Block[]): string {
  try {
    return slackMarkup({ blocks }).trim();
  } catch {
    return "";
  }
}
