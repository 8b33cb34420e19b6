import type { Ctx } from "../domain/context.ts";
import type { AppCalls } from "../domain/apps/app_call.ts";
import { storedId } from "../core/ids.ts";
import { table } from "../core/tables.ts";
import { parseDurations, type Settings } from "../core/settings.ts";

/** A command's flags by name, without the leading `--`. */
export type Flags = Record<string, string>;

/**
 * One admin CLI command. `usage` is shown in help and errors, and also declares the command's
 * flags: every `--flag` it mentions is accepted, any other is refused before `run`, so a typo
 * never runs a command with a flag silently ignored. `run` returns what is printed as JSON.
 */
export interface Command {
  usage: string;
  /** What it does, in one line, for `help`. */
  summary: string;
  /**
   * `calls`: what the CLI asks apps (an app:update's url_verification), closed after. `say`: a
   * note for the operator beside the result (stderr), wherever the command runs.
   */
  run(ctx: Ctx, flags: Flags, calls: AppCalls, say: (note: string) => void): Promise<unknown>;
}

/**
 * A command on the store's file rather than through a store the CLI opens (a backup, a restore,
 * which must find nobody holding it open, this CLI included): it gets the settings.
 */
export interface FileCommand {
  usage: string;
  /** What it does, in one line, for `help`. */
  summary: string;
  onFile(settings: Settings, flags: Flags): Promise<unknown>;
  /** How it runs through a service (`ADMIN_URL`; cli/remote.ts). */
  remote: RemoteFile;
}

/**
 * What a file command's file does when it runs on a service: the file it makes comes down to the
 * flag's path (`down`; `hint`: what to do instead when the service refuses it), the file the flag
 * names goes up (`up`), or it runs only where the store is, for the reason given (`localOnly`).
 */
export type RemoteFile =
  | { down: string; hint?: string }
  | { up: string }
  | { localOnly: string };

/** A refusal the service gave for a command run there: its words and exit code, as they were. */
export class RemoteFailure extends Error {
  constructor(message: string, readonly exit: number) {
    super(message);
  }
}

/** What a command prints as it is, instead of as JSON (`demo --format shell`). */
export class PlainText {
  constructor(readonly text: string) {}
}

/** A mistake in the command line itself: the dispatcher shows the command's usage with it. */
export class UsageError extends Error {}

/**
 * Parses `--name value` and `--name=value`; anything else is a UsageError. Errors never repeat a
 * value: an operator who pastes a token where an id belongs must not see it echoed into logs.
 */
export function parseFlags(args: string[], switches = new Set<string>()): Flags {
  const flags: Flags = table();
  for (let i = 0; i < args.length; i++) {
    const match = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(args[i]);
    if (!match) {
      throw new UsageError(
        `Argument ${i + 1} after the command is not a flag; flags look like --name value.`,
      );
    }
    const [, name, inline] = match;
    if (switches.has(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value.`);
      if (Object.hasOwn(flags, name)) throw new UsageError(`--${name} is given twice.`);
      flags[name] = "true";
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = args[i + 1];
      if (next === undefined || next.startsWith("--")) {
        throw new UsageError(`--${name} needs a value.`);
      }
      value = next;
      i++;
    }
    if (Object.hasOwn(flags, name)) throw new UsageError(`--${name} is given twice.`);
    flags[name] = value;
  }
  return flags;
}

/** The flags a usage line declares that take no value, written `[--name]`. */
export const switchFlags = (usage: string): Set<string> =>
  new Set([...usage.matchAll(/\[--([a-z][a-z0-9-]*)\]/g)].map((m) => m[1]));

/** The flags a usage line says name a file the command reads (`--manifest <file>`). */
export const fileFlags = (usage: string): string[] =>
  [...usage.matchAll(/--([a-z][a-z0-9-]*) <file>/g)].map((m) => m[1]);

/** The flags a usage line declares. */
export const declaredFlags = (usage: string): Set<string> =>
  new Set([...usage.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1]));

/**
 * The flags a usage line requires: those outside its [optional] parts. A usage with choices
 * (`(--a | --b)`) leaves them to its command.
 */
export function requiredFlags(usage: string): string[] {
  let plain = usage;
  for (let before = ""; before !== plain;) {
    [before, plain] = [plain, plain.replace(/\[[^[\]]*\]/g, "")];
  }
  return plain.includes("(") ? [] : [...declaredFlags(plain)];
}

/** Every required flag not given, named at once: one at a time would take as many runs. */
export function requireAll(flags: Flags, usage: string): void {
  const missing = requiredFlags(usage).filter((f) => !flags[f]?.trim()).map((f) => `--${f}`);
  if (missing.length === 0) return;
  const named = missing.length === 1
    ? missing[0]
    : `${missing.slice(0, -1).join(", ")} and ${missing.at(-1)}`;
  throw new UsageError(`${named} ${missing.length === 1 ? "is" : "are"} required.`);
}

export function requiredFlag(flags: Flags, name: string): string {
  const value = flags[name];
  if (value === undefined || value.trim() === "") throw new UsageError(`--${name} is required.`);
  return value;
}

export function uuidFlag(flags: Flags, name: string): string {
  const stored = storedId(requiredFlag(flags, name).trim());
  if (!stored) throw new UsageError(`--${name} must be a uuid.`);
  return stored;
}

/** A comma-separated flag as its non-empty, trimmed items. */
export function listFlag(flags: Flags, name: string): string[] {
  const items = requiredFlag(flags, name).split(",").map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new UsageError(`--${name} needs at least one item.`);
  return items;
}

/** An optional whole number of at least 1, or `fallback` when the flag is absent. */
export function positiveIntFlag<T>(flags: Flags, name: string, fallback: T): number | T {
  const value = flags[name];
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${name} must be a whole number of at least 1.`);
  }
  return Number(value);
}

/**
 * A length of time in seconds: a whole number of seconds, or a duration like `90m`, `12h` or
 * `30d` (so nobody has to work out 2,592,000).
 */
export function secondsFlag<T>(flags: Flags, name: string, fallback: T): number | T {
  const value = flags[name]?.trim();
  if (value === undefined) return fallback;
  if (/^\d+$/.test(value) && Number(value) >= 1 && Number.isSafeInteger(Number(value))) {
    return Number(value);
  }
  // One duration in whole seconds or more: no lists, no milliseconds.
  const ms = /,|ms$/.test(value) ? NaN : durationMs(value);
  if (ms >= 1_000 && ms % 1_000 === 0) return ms / 1_000;
  throw new UsageError(
    `--${name} must be a number of seconds (3600) or a duration like 90m, 12h or 30d.`,
  );
}

/** The value of a flag that must be one of `choices`. */
export function choiceFlag<T extends string>(
  flags: Flags,
  name: string,
  choices: readonly T[],
  fallback: T,
): T {
  const value = flags[name] ?? fallback;
  if (!(choices as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be one of ${choices.join(", ")}.`);
  }
  return value as T;
}

/** A duration as the settings read them (`90m`, `12h`), in ms; NaN when it is not one. */
function durationMs(value: string): number {
  try {
    return parseDurations(value)[0];
  } catch {
    return NaN;
  }
}
