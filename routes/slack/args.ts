/**
 * A Web API call's arguments: Slack's clients send a form whose values are strings (`blocks` as
 * JSON text, flags as "true"), or a JSON body whose values are themselves; both read alike here.
 */
import { z } from "zod";
import { SlackError } from "./errors.ts";
import { MAX_MARKDOWN } from "../../domain/messages/agent_blocks.ts";

/**
 * `blocks` or `attachments` as JSON text or as itself; checked by the domain, which names each
 * fault.
 */
export const blocksArg = z.unknown().transform((v, ctx) => {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    ctx.addIssue({ code: "custom", message: "blocks and attachments must be JSON" });
    return z.NEVER;
  }
}).optional();

/** A flag: `true`, or "true" / "1" in a form. */
export const flagArg = z.union([z.boolean(), z.string()]).optional()
  .transform((v) => v === true || v === "true" || v === "1");

/** A count in a form or JSON: `limit`, say. */
export const countArg = (fallback: number, max: number) =>
  z.union([z.number(), z.string()]).optional().transform((v) => {
    const n = v === undefined || v === "" ? fallback : Number(v);
    return Number.isInteger(n) && n > 0 ? Math.min(n, max) : fallback;
  });

/** The arguments as `schema` reads them, or Slack's `invalid_arguments`. */
export function args<T extends z.ZodType>(schema: T, params: Record<string, unknown>): z.infer<T> {
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw new SlackError("invalid_arguments");
  return parsed.data;
}

/** `markdown_text`, which Slack takes instead of `text` and `blocks`. */
export const markdownArg = z.string().min(1).max(MAX_MARKDOWN).optional();

/**
 * A message's content as the domain takes it: `text` and `blocks`, or `markdown_text` alone (a
 * `markdown` block, whose text is the body); with either of the others, `invalid_arguments`.
 */
export function contentOf(p: { text?: string; blocks?: unknown; markdown_text?: string }) {
  if (p.markdown_text === undefined) return { body: p.text ?? null, blocks: p.blocks };
  if (p.text !== undefined || p.blocks !== undefined) throw new SlackError("invalid_arguments");
  return { body: null, blocks: [{ type: "markdown", text: p.markdown_text }] };
}
