import { type Scope, SCOPES } from "../core/types.ts";
import { type Flags, listFlag, UsageError } from "./command.ts";

/** `all`, or a comma-separated list of known scopes. */
export function scopesFlag(flags: Flags): Scope[] {
  const items = listFlag(flags, "scopes");
  if (items.length === 1 && items[0] === "all") return [...SCOPES];
  if (!items.every((s) => (SCOPES as readonly string[]).includes(s))) {
    throw new UsageError(
      `--scopes has an unknown scope; use "all" or some of: ${SCOPES.join(",")}.`,
    );
  }
  return [...new Set(items as Scope[])];
}
