import { invalid } from "./errors.ts";

export const MAX_BODY_CHARS = 10_000;

/** Control characters other than tab and line feed (C0, DEL and C1): invisible, often hostile. */
const CONTROL = /[^\P{Cc}\t\n]/v;

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * A message body as stored: line breaks normalized to `\n`, surrounding whitespace trimmed,
 * 1 to 10,000 characters (code points). Other control characters and lone surrogates are
 * refused rather than stripped, so what the author sent is what everyone reads.
 */
export function cleanBody(raw: string): string {
  if (!raw.isWellFormed()) throw invalid("body", "The body must be valid Unicode text.");
  const text = raw.replace(/\r\n?/g, "\n").trim();
  if (!text) throw invalid("body", "The body is required and may not be blank.");
  if (text.length > MAX_BODY_CHARS && codePoints(text) > MAX_BODY_CHARS) {
    throw invalid("body", "The body may not be longer than 10,000 characters.");
  }
  if (CONTROL.test(text)) {
    throw invalid(
      "body",
      "The body may not contain control characters other than tab and newline.",
    );
  }
  return text;
}
