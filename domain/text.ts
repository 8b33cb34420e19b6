import { invalid } from "./errors.ts";

/** Control characters: C0, DEL and C1. */
const CONTROL = /\p{Cc}/v;
/** The same, but tab and line feed, which a message body may hold. */
const CONTROL_BUT_LAYOUT = /[^\P{Cc}\t\n]/v;

/**
 * The Text rule, for every text field: valid Unicode (no lone surrogates) and no control
 * characters, except `\n` and `\t` where `multiline`. Refused rather than stripped, so what was
 * sent is what everyone reads. Throws the 422 on `field`; returns the text unchanged.
 */
export function checkText(field: string, text: string, opts: { multiline?: boolean } = {}): string {
  if (!text.isWellFormed()) throw invalid(field, `The ${field} must be valid Unicode text.`);
  if (opts.multiline ? CONTROL_BUT_LAYOUT.test(text) : CONTROL.test(text)) {
    const allowed = opts.multiline ? " other than tab and newline" : "";
    throw invalid(field, `The ${field} may not contain control characters${allowed}.`);
  }
  return text;
}

/** `checkText` for an optional field. */
export const checkOptionalText = (field: string, text: string | null | undefined) =>
  text == null ? text : checkText(field, text);
