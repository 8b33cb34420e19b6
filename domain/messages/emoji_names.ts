/**
 * The standard emoji shortcodes, as Slack and GitHub spell them (`:thumbsup:`, `:+1:`, `:tada:`),
 * and the Unicode emoji each names: GitHub's own table (gemoji), not a list of ours.
 */
import { gemoji } from "gemoji";

const byName = new Map(gemoji.flatMap((e) => e.names.map((name) => [name, e.emoji] as const)));

/** The Unicode emoji a standard shortcode's name (without colons) stands for, if it is one. */
export const standardEmoji = (name: string): string | undefined => byName.get(name);
