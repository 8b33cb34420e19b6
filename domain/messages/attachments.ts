/**
 * Slack's message attachments (the "secondary" content older apps and incoming webhooks send):
 * kept on the message with the fields Slack documents and given back everywhere the message is
 * (decisions.md, "Slack's shapes"); their text counts as the message's when it has none of its
 * own. Each fault is named by its JSON pointer, as for blocks.
 */
import { z } from "zod";
import { ApiError } from "../../core/errors.ts";
import type { Attachment } from "../../core/types.ts";
import { parseBlocks } from "./blocks.ts";

/** Slack's limits: attachments to a message; the characters of a text field. */
const MAX_ATTACHMENTS = 20;
const MAX_TEXT = 3_000;
/** What a message's attachments may weigh in all, as stored: the message is one KV value. */
const MAX_BYTES = 16 * 1024;

const text = (max = MAX_TEXT) => z.string().max(max);
const url = z.url().max(3_000);

const attachment = z.object({
  fallback: text().optional(),
  color: z.string().max(20).optional(),
  pretext: text().optional(),
  author_name: text(256).optional(),
  author_link: url.optional(),
  author_icon: url.optional(),
  title: text(256).optional(),
  title_link: url.optional(),
  text: text().optional(),
  fields: z.array(z.object({
    title: text(256).optional(),
    value: text().optional(),
    short: z.boolean().optional(),
  })).max(20).optional(),
  image_url: url.optional(),
  thumb_url: url.optional(),
  footer: text(300).optional(),
  footer_icon: url.optional(),
  ts: z.union([z.number(), z.string().max(32)]).optional(),
  mrkdwn_in: z.array(z.string().max(32)).max(10).optional(),
  blocks: z.unknown().optional(),
});

const pointer = (path: PropertyKey[]) => `/attachments/${path.map(String).join("/")}`;

/**
 * The attachments a request gave, checked (null when it gave none): Slack's fields kept, any
 * other dropped; 422 on `attachments` naming each fault.
 */
export function parseAttachments(value: unknown): Attachment[] | null {
  if (value === undefined || value === null) return null;
  const parsed = z.array(attachment).max(MAX_ATTACHMENTS).safeParse(value);
  if (!parsed.success) {
    const faults = parsed.error.issues.slice(0, 10).map((i) => `${pointer(i.path)}: ${i.message}`);
    throw new ApiError(422, `The attachments are not valid: ${faults[0]}`, {
      attachments: faults,
    });
  }
  const kept = parsed.data.map(({ blocks, ...rest }, i) => {
    const checked = blocksOf(blocks, i);
    return checked ? { ...rest, blocks: checked } : rest;
  });
  if (kept.length === 0) return null;
  if (JSON.stringify(kept).length > MAX_BYTES) {
    throw new ApiError(422, `The attachments may hold at most ${MAX_BYTES} bytes in all.`, {
      attachments: [`/attachments: more than ${MAX_BYTES} bytes`],
    });
  }
  return kept;
}

/** An attachment's blocks, checked as a message's; their faults named under the attachment. */
function blocksOf(blocks: unknown, i: number) {
  try {
    return parseBlocks(blocks);
  } catch (e) {
    if (!(e instanceof ApiError) || !e.errors?.blocks) throw e;
    const faults = e.errors.blocks.map((f) => `/attachments/${i}${f}`);
    throw new ApiError(422, `The attachments are not valid: ${faults[0]}`, {
      attachments: faults,
    });
  }
}

/** The attachments if Slack's documented shape, else null: an incoming webhook keeps what it can. */
export function supportedAttachments(value: unknown): Attachment[] | null {
  try {
    return parseAttachments(value);
  } catch {
    return null;
  }
}
