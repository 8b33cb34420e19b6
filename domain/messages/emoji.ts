import { invalid } from "../../core/errors.ts";
import { standardEmoji } from "./emoji_names.ts";

export const MAX_EMOJI_CHARS = 32;

/** Exactly one RGI emoji: skin tones, ZWJ sequences, flags and keycaps included. */
const ONE_EMOJI = /^\p{RGI_Emoji}$/v;
/** `:name:` of a team's custom emoji (names as domain/people/workspace.ts allows them). */
const CUSTOM = /^:([a-z0-9_+-]{1,30}):$/;

/** A reaction emoji as written in the path, and the custom emoji it names, if any. */
export interface Emoji {
  text: string;
  customName: string | null;
}

/**
 * Reads the `{emoji}` path segment as it came over the wire (still percent-encoded). A standard
 * shortcode (`:thumbsup:`) is its Unicode emoji, so `:thumbsup:` and 👍 are one reaction. Whether
 * a custom emoji exists is the caller's question: it needs a KV read.
 */
export function parseEmoji(segment: string): Emoji {
  let text: string;
  try {
    text = decodeURIComponent(segment);
  } catch {
    throw invalid("emoji", "The emoji must be URL-encoded UTF-8.");
  }
  const length = [...text].length;
  if (length < 1 || length > MAX_EMOJI_CHARS) {
    throw invalid("emoji", `The emoji must be 1 to ${MAX_EMOJI_CHARS} characters.`);
  }
  if (ONE_EMOJI.test(text)) return { text, customName: null };
  const custom = CUSTOM.exec(text);
  const standard = custom && standardEmoji(custom[1]);
  if (standard) return { text: standard, customName: null };
  if (custom) return { text, customName: custom[1] };
  throw invalid("emoji", withoutColons(text) ?? EMOJI_RULE);
}

const EMOJI_RULE =
  "The emoji must be exactly one Unicode emoji, or a shortcode in colons: :thumbsup:, or :name: of a custom emoji of this team.";

/** A bare shortcode (`rocket`, as Slack's Web API takes it) is named, with what to send. */
function withoutColons(text: string): string | null {
  if (!/^[a-z0-9_+-]{1,30}$/.test(text)) return null;
  const standard = standardEmoji(text);
  return standard
    ? `The emoji must be in colons here: :${text}: (or ${standard} itself).`
    : `The emoji must be in colons here: :${text}:, naming a custom emoji of this team.`;
}

/** The 422 for a well-formed `:name:` that names no custom emoji of the team. */
export const unknownCustomEmoji = (name: string) =>
  invalid("emoji", `There is no custom emoji :${name}: in this team.`);
