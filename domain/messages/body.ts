import { invalid } from "../../core/errors.ts";
import { checkText, longerThan } from "../text.ts";

export const MAX_BODY_CHARS = 10_000;

/**
 * A message body as stored: line breaks normalized to `\n`, surrounding whitespace trimmed,
 * 1 to 10,000 characters (code points), and the Text rule (tab and newline allowed). `field`
 * is what the client called it (`text` through an incoming webhook).
 */
export function cleanBody(raw: string, field = "body"): string {
  const text = checkText(field, raw.replace(/\r\n?/g, "\n"), { multiline: true }).trim();
  if (!text) throw invalid(field, `The ${field} is required and may not be blank.`);
  if (longerThan(text, MAX_BODY_CHARS)) {
    throw invalid(field, `The ${field} may not be longer than 10,000 characters.`);
  }
  return text;
}
