import { invalid } from "./errors.ts";

/**
 * The message text of a Slack-style incoming-webhook payload. `text` when it is there; else the
 * text its `blocks` and `attachments` carry, so that a payload built for Slack without `text`
 * still posts something readable: section, header and context text and section fields; an
 * attachment's `pretext`, `title` and `text` (or its `fallback` when it has none of those) and
 * its own blocks. Everything else Slack takes (`username`, `icon_emoji`, `channel`, `mrkdwn`,
 * colors, links, …) is accepted and ignored. Throws the 422 on `text` when there is none.
 */
export function slackText(payload: Record<string, unknown>): string {
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
