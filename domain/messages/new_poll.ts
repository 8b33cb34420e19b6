/** A poll as posted (decisions.md, "Polls"): its options checked, their counts at zero. */
import type { Poll } from "../../core/types.ts";
import { invalid } from "../../core/errors.ts";
import { checkName } from "../text.ts";

export const MIN_OPTIONS = 2;
export const MAX_OPTIONS = 10;
export const MAX_OPTION_CHARS = 80;

/** A new poll from what was posted: 2-10 distinct options of 1-80 characters; 422 on `poll`. */
export function pollOf(given: { options: string[]; multiple?: boolean | null }): Poll {
  const texts = given.options.map((o) => checkName("poll", o.trim(), MAX_OPTION_CHARS));
  if (texts.some((t) => t === "")) throw invalid("poll", "A poll's options can't be blank.");
  if (texts.length < MIN_OPTIONS || texts.length > MAX_OPTIONS) {
    throw invalid("poll", `A poll has ${MIN_OPTIONS} to ${MAX_OPTIONS} options.`);
  }
  if (new Set(texts).size !== texts.length) {
    throw invalid("poll", "A poll's options must differ from each other.");
  }
  return {
    options: texts.map((text, i) => ({ id: String(i + 1), text, count: 0 })),
    multiple: given.multiple ?? false,
    closed_at: null,
  };
}
