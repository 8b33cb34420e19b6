import { invalid } from "../core/errors.ts";

/**
 * The message text of a Slack-style incoming-webhook payload. `text` when it is there; else the
 * text its `blocks` and `attachments` carry, so that a payload built for Slack without `text`
 * still posts something readable: section, header and context text and section fields; an
 * attachment's `pretext`, `title` and `text` (or its `fallback` when it has none of those) and
 * its own blocks. Everything else Slack takes (`username`, `icon_emoji`, `channel`, `mrkdwn`,
 * colors, links, …) is accepted and ignored. Throws the 422 on `text` when there is none.
 */
export function slackText(payload: Record<string, unknown>): string {
  assertBounded(payload);
  const { text } = payload;
  if (text !== undefined && text !== null && typeof text !== "string") {
    throw invalid("text", "The text must be a string.");
  }
  if (typeof text === "string" && text.trim()) return text;
  const parts = [...blockTexts(payload.blocks), ...attachmentTexts(payload.attachments)];
  if (parts.length === 0) {
    throw invalid("text", "The text is required (or blocks or attachments that carry text).");
  }
  return parts.join("\n");
}

const list = (v: unknown): Record<string, unknown>[] =>
  Array.isArray(v) ? v.filter((x) => typeof x === "object" && x !== null) : [];

/** A text object's text (`{ type: "mrkdwn" | "plain_text", text }`), or a bare string. */
function textOf(v: unknown): string | null {
  if (typeof v === "string") return v.trim() ? v : null;
  if (typeof v === "object" && v !== null) return textOf((v as { text?: unknown }).text);
  return null;
}

function blockTexts(blocks: unknown): string[] {
  return list(blocks).flatMap((b) => [
    textOf(b.text),
    ...list(b.fields).map(textOf),
    ...(b.type === "context" ? list(b.elements).map(textOf) : []),
  ]).filter((t): t is string => t !== null);
}

function attachmentTexts(attachments: unknown): string[] {
  return list(attachments).flatMap((a) => {
    const own = [textOf(a.pretext), textOf(a.title), textOf(a.text)]
      .filter((t): t is string => t !== null);
    const fallback = textOf(a.fallback);
    return [...(own.length > 0 ? own : fallback ? [fallback] : []), ...blockTexts(a.blocks)];
  });
}

/** How deep a payload may nest, and how many blocks, attachments and fields it may hold in all. */
export const MAX_DEPTH = 32;
export const MAX_ELEMENTS = 1_000;

const ELEMENT_LISTS = new Set(["blocks", "attachments", "fields"]);

/**
 * Refuses, with the 422 on `text`, a payload nested deeper than MAX_DEPTH levels or with more
 * than MAX_ELEMENTS blocks, attachments and fields: the walk that reads the text must stay short
 * whatever is sent. Walked with a stack of its own, so no nesting can exhaust the call stack.
 */
function assertBounded(payload: Record<string, unknown>): void {
  const stack: [unknown, number][] = [[payload, 1]];
  let elements = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (depth > MAX_DEPTH) {
      throw invalid("text", `The payload may not be nested deeper than ${MAX_DEPTH} levels.`);
    }
    for (const [key, child] of Object.entries(value)) {
      if (ELEMENT_LISTS.has(key) && Array.isArray(child)) elements += child.length;
      stack.push([child, depth + 1]);
    }
    if (elements > MAX_ELEMENTS) {
      throw invalid(
        "text",
        `The payload may hold at most ${MAX_ELEMENTS} blocks, attachments and fields in all.`,
      );
    }
  }
}
