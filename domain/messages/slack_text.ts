import { invalid } from "../../core/errors.ts";
import { richText, richTextText } from "./rich_text.ts";
import { agentBlockText } from "./agent_blocks.ts";

/**
 * What Slack would show of an incoming-webhook payload, as plain text (decisions: "Incoming
 * webhooks"): `text`, or without it the text of `blocks`; then for each attachment its
 * `pretext`, `title`, `text` and each field as `Title: value` (its `fallback` only where it has
 * none of these) and its own blocks; each on its own line. Slack's markup becomes plain text.
 * Everything else Slack takes (`username`, `icon_emoji`, `channel`, colors, …) is accepted and
 * ignored. Throws the 422 on `text` when nothing carries text, or the payload is too big to walk.
 */
export function slackText(payload: Record<string, unknown>): string {
  return plain(slackMarkup(payload));
}

/**
 * What a payload says, as `slackText`, but in Slack's markup still: a message's body when it was
 * sent blocks or attachments alone, whose mentions its `text` then names as a body's are.
 */
export function slackMarkup(payload: Record<string, unknown>): string {
  assertBounded(payload);
  const { text } = payload;
  if (text !== undefined && text !== null && typeof text !== "string") {
    throw invalid("text", "The text must be a string.");
  }
  const lead = typeof text === "string" && text.trim() ? [text] : blockTexts(payload.blocks);
  const parts = [...lead, ...attachmentTexts(payload.attachments)];
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

const present = (texts: (string | null)[]) => texts.filter((t): t is string => t !== null);

function blockTexts(blocks: unknown): string[] {
  return list(blocks).flatMap((b) => {
    const agents = agentBlockText(b);
    if (agents !== null) return [agents];
    if (b.type === "rich_text") {
      const rich = richText.safeParse(b);
      return rich.success ? present([textOf(richTextText(rich.data))]) : [];
    }
    return present([
      textOf(b.text),
      ...list(b.fields).map(textOf),
      ...(b.type === "context" ? list(b.elements).map(textOf) : []),
    ]);
  });
}

/** An attachment field as Slack lays it out: its title, then its value. */
function fieldText(f: Record<string, unknown>): string | null {
  const [title, value] = [textOf(f.title), textOf(f.value)];
  if (title && value) return `${title}: ${value}`;
  return title ?? value;
}

function attachmentTexts(attachments: unknown): string[] {
  return list(attachments).flatMap((a) => {
    const own = present([
      textOf(a.pretext),
      textOf(a.title),
      textOf(a.text),
      ...list(a.fields).map(fieldText),
    ]);
    const fallback = textOf(a.fallback);
    return [...(own.length > 0 ? own : fallback ? [fallback] : []), ...blockTexts(a.blocks)];
  });
}

/** Slack's special mentions, as people read them. */
const SPECIAL = new Map([
  ["here", "@here"],
  ["channel", "@channel"],
  ["everyone", "@everyone"],
]);

/** Names by id, for mentions; none where a mention is shown by its label or id. */
type Names = Readonly<Record<string, string>>;

/** One `<…>` of Slack's markup, as plain text: a mention by its name in `names`, if there. */
function unwrapMarkup(target: string, label: string | undefined, names?: Names): string {
  const id = target.slice(1).toLowerCase();
  const named = names && Object.hasOwn(names, id) ? names[id] : undefined;
  if (target.startsWith("@")) return `@${named ?? label ?? target.slice(1)}`;
  if (target.startsWith("#")) {
    return `#${named ?? label ?? (names ? "private-channel" : target.slice(1))}`;
  }
  if (target.startsWith("!")) {
    return label ?? SPECIAL.get(target.slice(1)) ?? `@${target.slice(1).split("^")[0]}`;
  }
  return label && label !== target ? `${label} (${target})` : target;
}

/**
 * Slack's markup as plain text: `<url|label>` is `label (url)`, `<url>` the url, `<@U123>`
 * `@U123`, `<#C123|general>` `#general`, `<!here>` `@here`; then the three entities Slack
 * escapes (`&lt;`, `&gt;`, `&amp;`) are their characters again.
 */
function plain(text: string, names?: Names): string {
  return text
    .replace(
      /<([^<>|\s]+)(?:\|([^<>]*))?>/g,
      (_, target: string, label?: string) => unwrapMarkup(target, label, names),
    )
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
}

/**
 * A message body as its readers see it (the Message's `text`): Slack's markup as plain text, the
 * people and channels it mentions by the names kept with it (domain/messages/mentions.ts); a
 * channel without one is `#private-channel`.
 */
export const renderedText = (body: string, names: Names = {}) =>
  body.includes("<") || body.includes("&") ? plain(body, names) : body;

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
