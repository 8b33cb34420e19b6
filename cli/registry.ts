/**
 * The admin commands, in one table the CLI runs locally and a service runs for a CLI elsewhere
 * (cli/service_runner.ts), so no command exists in one mode only; and how each refusal reads.
 */
import { didYouMean } from "../core/suggest.ts";
import { ApiError, ConflictError } from "../core/errors.ts";
import { SettingsError } from "../core/settings.ts";
import { appCommands } from "./app_commands.ts";
import { auditCommands } from "./audit_commands.ts";
import { channelCommands } from "./channel_commands.ts";
import { backupCommands } from "./backup_commands.ts";
import {
  type Command,
  declaredFlags,
  type FileCommand,
  type Flags,
  RemoteFailure,
  requireAll,
  UsageError,
} from "./command.ts";
import { demoCommands } from "./demo_command.ts";
import { incomingCommands } from "./incoming_commands.ts";
import { loginCommands } from "./login_command.ts";
import { moveCommands } from "./move_commands.ts";
import { peopleCommands } from "./people_commands.ts";
import { tokenCommands } from "./token_commands.ts";
import { webhookCommands } from "./webhook_commands.ts";
import { workspaceCommands } from "./workspace_commands.ts";

export type AnyCommand = Command | FileCommand;

/**
 * Merges command files' records; a name defined twice is a bug, so it fails loudly. A Map: the
 * operator names the command, and `constructor` must be as unknown as any other word.
 */
function registry(...records: Record<string, AnyCommand>[]): Map<string, AnyCommand> {
  const all = new Map<string, AnyCommand>();
  for (const [name, command] of records.flatMap(Object.entries)) {
    if (all.has(name)) throw new Error(`admin CLI: command ${name} is defined twice`);
    all.set(name, command);
  }
  return all;
}

export const COMMANDS = registry(
  workspaceCommands,
  tokenCommands,
  channelCommands,
  auditCommands,
  demoCommands,
  webhookCommands,
  incomingCommands,
  loginCommands,
  backupCommands,
  moveCommands,
  peopleCommands,
  appCommands,
);

/** How the operator runs this CLI, for the usage lines: the Docker image's `admin` says it is one. */
export const PROGRAM = Deno.env.get("ADMIN_PROGRAM") ?? "deno task admin";

/** A refusal as the CLI prints it: one line (and the usage, for the command line's), an exit code. */
export interface Failure {
  message: string;
  exit: number;
}

/** Why a command failed, in words, with the exit code the CLI ends with. */
export function failureOf(e: unknown, command: AnyCommand): Failure {
  if (e instanceof UsageError) {
    return { message: `${e.message}\nUsage: ${PROGRAM} ${command.usage}`, exit: 2 };
  }
  if (e instanceof RemoteFailure) return { message: e.message, exit: e.exit };
  if (e instanceof ApiError || e instanceof SettingsError || e instanceof ConflictError) {
    return { message: e.message, exit: 1 };
  }
  return { message: `${command.usage.split(" ")[0]}: ${unexpected(e)}`, exit: 1 };
}

/**
 * An error no command turned into words, in one line: what the system said, and for a file the
 * runtime refused what to check. (`DEBUG=1` prints its stack too.)
 */
function unexpected(e: unknown): string {
  if (Deno.env.get("DEBUG")) console.error(e);
  const said = String((e as Error)?.message ?? e).split("\n")[0];
  if (e instanceof Deno.errors.NotFound) {
    return `${said}: check that the path and its folder exist.`;
  }
  if (e instanceof Deno.errors.PermissionDenied) {
    return `${said}: run it as the user that owns the store's folder, or fix its permissions.`;
  }
  return `failed: ${said}`;
}

/**
 * Refuses flags the command's usage does not declare, and names every required one missing:
 * checked by the CLI before it runs a command anywhere, and by the service again.
 */
/**
 * The app commands name their app `--id` in some and `--app` in others: each takes the other
 * name too, where it doesn't mean something else there (`app:token:revoke --id` is a token's).
 * The line with the other name, as the command's usage spells it.
 */
export function withAppFlag(usage: string, args: string[]): string[] {
  const declared = declaredFlags(usage);
  const named = /--(id|app) <app id>/.exec(usage)?.[1];
  const other = named === "id" ? "app" : "id";
  if (!named || declared.has(other)) return args;
  const alias = new RegExp(`^--${other}(?==|$)`);
  return args.map((a) => a.replace(alias, `--${named}`));
}

export function checkFlags(command: AnyCommand, flags: Flags): void {
  const allowed = declaredFlags(command.usage);
  const unknown = Object.keys(flags).find((f) => !allowed.has(f));
  if (unknown) {
    throw new UsageError(`Unknown flag --${unknown}.${didYouMean(unknown, allowed, "--")}`);
  }
  requireAll(flags, command.usage);
}

/**
 * What integrators make, the CLI doesn't: where they are made instead, for the commands people
 * look for first.
 */
const MADE_ELSEWHERE = new Map([
  [
    "webhook:create",
    "Outgoing subscriptions are made through the API (POST /api/v1/webhooks, with a token that has webhooks:write) or on the settings screen (Webhooks, New subscription); the CLI lists, enables and rotates them (webhook:list).",
  ],
  [
    "channel:create",
    "Channels are made through the API (POST /api/v1/channels, by the person or bot whose token it is, who becomes their first member); the CLI lists them (channel:list) and adds members (member:add).",
  ],
]);

/** One line for a command that isn't one: the closest that is, and where they are all listed. */
export const unknownCommand = (name: string) =>
  MADE_ELSEWHERE.get(name) ??
    `Unknown command "${name}".${
      didYouMean(name, [...COMMANDS.keys()])
    } Every command: ${PROGRAM} help`;
