import { invalid } from "../core/errors.ts";

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

/** Invisible format characters: zero-width spaces and joiners, bidirectional controls. */
const FORMAT = /\p{Cf}/v;

/** The longest a name may be, in characters (code points). */
export const MAX_NAME_CHARS = 255;

/**
 * The rule for names (of channels and their topics, subscriptions, incoming webhooks, bots,
 * people, tokens, teams): the Text rule, no invisible format characters, so that a name can't
 * pass for another ("ge\u200bneral" for "general"), and at most `max` characters. Throws the 422
 * on `field`; returns the name unchanged.
 */
export function checkName(field: string, name: string, max = MAX_NAME_CHARS): string {
  checkText(field, name);
  if (FORMAT.test(name)) {
    throw invalid(
      field,
      `The ${field} may not contain invisible formatting characters (zero-width or bidirectional).`,
    );
  }
  if (longerThan(name, max)) {
    throw invalid(field, `The ${field} may not be longer than ${max} characters.`);
  }
  return name;
}

/** `checkName` for an optional field. */
export const checkOptionalName = (field: string, name: string | null | undefined) =>
  name == null ? name : checkName(field, name);

/**
 * Whether `text` holds more than `max` characters (code points). Counts no further than it
 * must: a text of more than twice `max` UTF-16 units is too long without looking, so a check
 * of a megabyte costs nothing.
 */
export function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  if (text.length > 2 * max) return true;
  let n = 0;
  for (const _ of text) if (++n > max) return true;
  return false;
}
