import type { Ctx } from "../domain/context.ts";
import { didYouMean } from "../core/suggest.ts";
import { loadSettings } from "../core/settings.ts";
import { openStore } from "../kv/store/open.ts";
import { AppSender } from "../delivery/apps/sender.ts";
import { loadKeyring } from "../domain/data/app_key.ts";
import { requireReadableByService, serviceBaseUrl } from "../domain/data/service.ts";
import {
  declaredFlags,
  type Flags,
  parseFlags,
  PlainText,
  switchFlags,
  UsageError,
} from "./command.ts";
import {
  type AnyCommand,
  checkFlags,
  COMMANDS,
  failureOf,
  PROGRAM,
  unknownCommand,
  withAppFlag,
} from "./registry.ts";
import { remoteUrlOf, runRemote } from "./remote.ts";

/**
 * The settings the CLI reads, as the service does (it works on the service's store), each with
 * the value in effect here: in the Docker image that is the image's, not the checkout's default.
 * APP_KEY's value is never shown, only where it comes from.
 */
const settingsHelp = (url: string | null) => {
  const env = (name: string) => Deno.env.get(name) || undefined;
  const mode = url
    ? `Mode: remote. Every command runs on the service at ${url} (ADMIN_URL or --url), signed
with APP_KEY, which must be that service's.`
    : "Mode: local. Commands work on the store KV_PATH names (ADMIN_URL or --url: on a service).";
  return `${mode}

Settings (the environment, as for the service), as in effect now:
  ADMIN_URL the running service to work through, instead of opening its store
            now ${url ?? "not set"}
  KV_PATH   the store to work on (local mode); the CLI never makes one
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

const help = (url: string | null) =>
  `Usage: ${PROGRAM} <command> [--flag value ...] [--url <service URL>]\n` +
  "Prints one JSON value (an object, or an array for lists) on stdout; errors go to stderr.\n\n" +
  "Commands:\n" +
  [...COMMANDS].map(([name, c]) => `  ${name.padEnd(26)}  ${c.summary}`).join("\n") +
  `\n\n${settingsHelp(url)}\n\nMore on one command: ${PROGRAM} help <command>`;

/** `help <command>`: what it does, its flags, what it prints. */
const helpFor = (name: string, command: AnyCommand, url: string | null) =>
  `${name}: ${command.summary}\n\nUsage: ${PROGRAM} ${command.usage}\n\n${settingsHelp(url)}`;

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

/** The command line's flags, checked against the command's usage before anything runs. */
function flagsOf(command: AnyCommand, line: string[]): Flags {
  const args = withAppFlag(command.usage, line);
  const allowed = declaredFlags(command.usage);
  // Named before values are read: a mistyped last flag is unknown, not one that needs a value.
  const given = args.flatMap((a) => /^--([a-z][a-z0-9-]*)/.exec(a)?.[1] ?? []);
  const unknown = given.find((f) => !allowed.has(f));
  if (unknown) {
    throw new UsageError(`Unknown flag --${unknown}.${didYouMean(unknown, allowed, "--")}`);
  }
  const flags = parseFlags(args, switchFlags(command.usage));
  checkFlags(command, flags);
  return flags;
}

/** Runs a command on the store KV_PATH names. */
async function runLocal(name: string, command: AnyCommand, flags: Flags, args: string[]) {
  if ("onFile" in command) return await command.onFile(loadSettings(Deno.env.toObject()), flags);
  // A list reads; every other command may write.
  const ctx = await openCtx({
    writes: !name.endsWith(":list"),
    command: [name, ...args].join(" "),
  });
  const calls = new AppSender();
  try {
    return await command.run(ctx, flags, calls, (note) => console.error(note));
  } finally {
    await calls.close();
    ctx.kv.close();
  }
}

async function run(
  { name, command, args, url }: {
    name: string;
    command: AnyCommand;
    args: string[];
    url: string | null;
  },
): Promise<number> {
  try {
    const flags = flagsOf(command, args);
    const result = url
      ? await runRemote(url, { name, command, flags })
      : await runLocal(name, command, flags, args);
    console.log(result instanceof PlainText ? result.text : JSON.stringify(result, null, 2));
    return 0;
  } catch (e) {
    const { message, exit } = failureOf(e, command);
    console.error(message);
    return exit;
  }
}

async function main(line: string[]): Promise<number> {
  let found;
  try {
    found = remoteUrlOf(line, Deno.env.get("ADMIN_URL"));
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const { url, rest: [name, ...args] } = found;
  if (name === "help" || name === "--help" || name === "-h") {
    const asked = args[0];
    if (asked === undefined) {
      console.log(help(url));
      return 0;
    }
    const command = COMMANDS.get(asked);
    if (!command) {
      console.error(unknownCommand(asked));
      return 2;
    }
    console.log(helpFor(asked, command, url));
    return 0;
  }
  const command = name === undefined ? undefined : COMMANDS.get(name);
  if (!command) {
    console.error(name === undefined ? `No command given.\n\n${help(url)}` : unknownCommand(name));
    return 2;
  }
  // `admin token:create --help` is `admin help token:create`, as every CLI people know takes it.
  if (args.some((a) => a === "--help" || a === "-h")) {
    console.log(helpFor(name!, command, url));
    return 0;
  }
  return await run({ name: name!, command, args, url });
}

Deno.exitCode = await main(Deno.args);
