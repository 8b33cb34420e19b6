/**
 * The standard emoji shortcodes, as Slack and GitHub spell them (`:thumbsup:`, `:+1:`, `:tada:`),
 * and the Unicode emoji each names: GitHub's own table (gemoji), not a list of ours.
 */
import { gemoji } from "gemoji";

const byName = new Map(gemoji.flatMap((e) => e.names.map((name) => [name, e.emoji] as const)));

/** The Unicode emoji a standard shortcode's name (without colons) stands for, if it is one. */
export const standardEmoji = (name: string): string | undefined => byName.get(name);

const byEmoji = new Map(
  gemoji.map((e) => [e.emoji, e.names[0]] as const).concat(
    // Skin tones and variation selectors dropped, the base emoji's name.
    gemoji.map((e) => [e.emoji.replace(/\uFE0F/g, ""), e.names[0]] as const),
  ),
);

/**
 * A reaction as Slack names it: a custom emoji's name, or a standard emoji's first shortcode name
 * (`thumbsup` for 👍); an emoji with no shortcode as itself.
 */
export function slackEmojiName(emoji: string): string {
  const custom = /^:([a-z0-9_+-]+):$/.exec(emoji);
  if (custom) return custom[1];
  return byEmoji.get(emoji) ?? byEmoji.get(emoji.replace(/\uFE0F/g, "")) ?? emoji;
}
