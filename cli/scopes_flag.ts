import { type Scope, SCOPES } from "../core/types.ts";
import { type Flags, listFlag, UsageError } from "./command.ts";
import { didYouMean } from "../core/suggest.ts";

/** `all`, or a comma-separated list of known scopes. */
export function scopesFlag(flags: Flags): Scope[] {
  const items = listFlag(flags, "scopes");
  if (items.length === 1 && items[0] === "all") return [...SCOPES];
  const unknown = items.find((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown !== undefined) {
    throw new UsageError(
      `--scopes: "${unknown}" is not a scope.${didYouMean(unknown, SCOPES)} Use "all" or some of: ${
        SCOPES.join(",")
      }.`,
    );
  }
  return [...new Set(items as Scope[])];
}
