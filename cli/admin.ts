import type { Ctx } from "../domain/context.ts";
import { didYouMean } from "./suggest.ts";
import { ApiError, ConflictError } from "../core/errors.ts";
import { loadSettings, SettingsError } from "../core/settings.ts";
import { openStore } from "../kv/open.ts";
import { AppSender } from "../delivery/app_sender.ts";
import { loadKeyring } from "../domain/data/app_key.ts";
import { requireReadableByService, serviceBaseUrl } from "../domain/data/service.ts";
import { appCommands } from "./app_commands.ts";
import { auditCommands } from "./audit_commands.ts";
import { channelCommands } from "./channel_commands.ts";
import { backupCommands } from "./backup_commands.ts";
import {
  type Command,
  declaredFlags,
  type FileCommand,
  parseFlags,
  PlainText,
  requireAll,
  switchFlags,
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

type AnyCommand = Command | FileCommand;

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

const commands = registry(
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

/**
 * The settings the CLI reads, as the service does (it works on the service's store), each with
 * the value in effect here: in the Docker image that is the image's, not the checkout's default.
 * APP_KEY's value is never shown, only where it comes from.
 */
const settingsHelp = () => {
  const env = (name: string) => Deno.env.get(name) || undefined;
  return `Settings (the environment, as for the service), as in effect now:
  KV_PATH   the store to work on; the CLI never makes one
            now ${env("KV_PATH") ?? "./data/kv.sqlite3 (the default: KV_PATH is not set)"}
  APP_KEY   the key the service's secrets are sealed with
            now ${
    env("APP_KEY") ? "set (APP_KEY)" : "app.key beside the store (APP_KEY is not set)"
  }
  BASE_URL  the service's public address, for the URLs printed
            now ${
    env("BASE_URL") ?? "the one the service recorded when it last started (BASE_URL is not set)"
  }`;
};

/** How the operator runs this CLI, for the usage lines: the Docker image's `admin` says it is one. */
const PROGRAM = Deno.env.get("ADMIN_PROGRAM") ?? "deno task admin";

const help = () =>
  `Usage: ${PROGRAM} <command> [--flag value ...]\n` +
  "Prints one JSON value (an object, or an array for lists) on stdout; errors go to stderr.\n\n" +
  "Commands:\n" +
  [...commands].map(([name, c]) => `  ${name.padEnd(26)}  ${c.summary}`).join("\n") +
  `\n\n${settingsHelp()}\n\nMore on one command: ${PROGRAM} help <command>`;

/** `help <command>`: what it does, its flags, what it prints. */
const helpFor = (name: string, command: AnyCommand) =>
  `${name}: ${command.summary}\n\nUsage: ${PROGRAM} ${command.usage}\n\n${settingsHelp()}`;

/**
 * The same store, settings and keys the server uses (KV_PATH, APP_KEY, ...). The CLI never makes
 * a store or a key: it works on what a service started, and prints URLs with that service's
 * BASE_URL unless its own environment sets one.
 */
async function openCtx(args: { writes: boolean; command: string }): Promise<Ctx> {
  const env = Deno.env.toObject();
  const settings = loadSettings(env);
  const kv = await openStore(settings, { existing: true });
  try {
    const keyring = await loadKeyring(settings, kv, { existing: true });
    if (args.writes) await requireReadableByService(kv, args.command);
    if (!env.BASE_URL) settings.baseUrl = await serviceBaseUrl(kv) ?? settings.baseUrl;
    return { kv, settings, keyring };
  } catch (e) {
    kv.close();
    throw e;
  }
}

/** Prints why a command failed; returns the exit code. */
function fail(e: unknown, command: AnyCommand): number {
  if (e instanceof UsageError) {
    console.error(`${e.message}\nUsage: ${PROGRAM} ${command.usage}`);
    return 2;
  }
  if (e instanceof ApiError || e instanceof SettingsError || e instanceof ConflictError) {
    console.error(e.message);
    return 1;
  }
  console.error(`${command.usage.split(" ")[0]}: ${unexpected(e)}`);
  return 1;
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

async function run(name: string, command: AnyCommand, args: string[]): Promise<number> {
  try {
    const allowed = declaredFlags(command.usage);
    // Named before values are read: a mistyped last flag is unknown, not one that needs a value.
    const given = args.flatMap((a) => /^--([a-z][a-z0-9-]*)/.exec(a)?.[1] ?? []);
    const unknown = given.find((f) => !allowed.has(f));
    if (unknown) {
      throw new UsageError(`Unknown flag --${unknown}.${didYouMean(unknown, allowed, "--")}`);
    }
    const flags = parseFlags(args, switchFlags(command.usage));
    requireAll(flags, command.usage);
    if ("onFile" in command) {
      const result = await command.onFile(loadSettings(Deno.env.toObject()), flags);
      console.log(JSON.stringify(result, null, 2));
      return 0;
    }
    // A list reads; every other command may write.
    const ctx = await openCtx({
      writes: !name.endsWith(":list"),
      command: [name, ...args].join(" "),
    });
    const calls = new AppSender();
    try {
      const result = await command.run(ctx, flags, calls);
      console.log(result instanceof PlainText ? result.text : JSON.stringify(result, null, 2));
    } finally {
      await calls.close();
      ctx.kv.close();
    }
    return 0;
  } catch (e) {
    return fail(e, command);
  }
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
const unknownCommand = (name: string) =>
  MADE_ELSEWHERE.get(name) ??
    `Unknown command "${name}".${
      didYouMean(name, [...commands.keys()])
    } Every command: ${PROGRAM} help`;

async function main([name, ...args]: string[]): Promise<number> {
  if (name === "help" || name === "--help" || name === "-h") {
    const asked = args[0];
    if (asked === undefined) {
      console.log(help());
      return 0;
    }
    const command = commands.get(asked);
    if (!command) {
      console.error(unknownCommand(asked));
      return 2;
    }
    console.log(helpFor(asked, command));
    return 0;
  }
  const command = name === undefined ? undefined : commands.get(name);
  if (!command) {
    console.error(name === undefined ? `No command given.\n\n${help()}` : unknownCommand(name));
    return 2;
  }
  // `admin token:create --help` is `admin help token:create`, as every CLI people know takes it.
  if (args.some((a) => a === "--help" || a === "-h")) {
    console.log(helpFor(name!, command));
    return 0;
  }
  return await run(name!, command, args);
}

Deno.exitCode = await main(Deno.args);
