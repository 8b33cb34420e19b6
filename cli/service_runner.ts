/**
 * The admin commands as a service runs them for a CLI elsewhere (routes/admin.ts): the CLI's own
 * table, so a command exists in both modes or neither. Files the CLI read for a command (`--manifest
 * <file>`) are put in a folder of the service's for it; a file a command makes is made there for
 * the route to send down; a file the CLI sent up is where the route put it.
 */
import type { Ctx } from "../domain/context.ts";
import type { AppCalls } from "../domain/apps/app_call.ts";
import type { AdminInputs, AdminResult, AdminRunner } from "../domain/data/admin_requests.ts";
import { fileFlags, type Flags, PlainText } from "./command.ts";
import { type AnyCommand, checkFlags, COMMANDS, failureOf, unknownCommand } from "./registry.ts";

/** The runner `main.ts` gives the service: commands on its own store, settings and keys. */
export function serviceRunner(ctx: Ctx, calls: AppCalls): AdminRunner {
  return {
    takesFile(name) {
      const command = COMMANDS.get(name);
      return !!command && "onFile" in command && "up" in command.remote;
    },
    async run(name, flags, inputs) {
      const notes: string[] = [];
      const command = COMMANDS.get(name);
      if (!command) return { ok: false, message: unknownCommand(name), exit: 2, notes };
      // Only a command that reads or makes files gets a folder: most run on the store alone.
      const dir = "onFile" in command || fileFlags(command.usage).length > 0
        ? await Deno.makeTempDir({ prefix: "admin-" })
        : "";
      try {
        const given = await withFiles(command, { flags, files: inputs.files, dir });
        const say = (note: string) => void notes.push(note);
        const result = await runOne(ctx, { command, flags: given, calls, inputs, dir, say });
        return { ...result, notes };
      } catch (e) {
        return { ok: false, ...failureOf(e, command), notes };
      } finally {
        // A file made to go down is moved out first: what is left here was the command's input.
        if (dir) await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
}

/** The flags with each file the CLI read written here, the flag naming it. */
async function withFiles(
  command: AnyCommand,
  { flags, files, dir }: { flags: Flags; files: Record<string, string>; dir: string },
): Promise<Flags> {
  const given = { ...flags };
  for (const flag of fileFlags(command.usage)) {
    const text = Object.hasOwn(files, flag) ? files[flag] : undefined;
    if (text === undefined) continue;
    given[flag] = `${dir}/${flag}`;
    await Deno.writeTextFile(given[flag], text);
  }
  return given;
}

async function runOne(
  ctx: Ctx,
  { command, flags, calls, inputs, dir, say }: {
    command: AnyCommand;
    flags: Flags;
    calls: AppCalls;
    inputs: AdminInputs;
    dir: string;
    say: (note: string) => void;
  },
): Promise<AdminResult> {
  if (!("onFile" in command)) {
    checkFlags(command, flags);
    const result = await command.run(ctx, flags, calls, say);
    return result instanceof PlainText
      ? { ok: true, text: result.text }
      : { ok: true, value: result };
  }
  const role = command.remote;
  if ("localOnly" in role) return { ok: false, message: role.localOnly, exit: 1 };
  if ("up" in role) {
    const given = { ...flags, [role.up]: inputs.upload ?? "" };
    checkFlags(command, given);
    return { ok: true, value: await command.onFile(ctx.settings, given) };
  }
  const made = `${dir}/made`;
  const given = { ...flags, [role.down]: made };
  checkFlags(command, given);
  try {
    const { file: _, ...value } = await command.onFile(ctx.settings, given) as { file?: string };
    // Out of the folder removed after the run: the route sends it, then removes it.
    const file = await Deno.makeTempFile({ prefix: "admin-made-" });
    await Deno.rename(made, file);
    return { ok: true, file, value };
  } catch (e) {
    const { message, exit } = failureOf(e, command);
    return {
      ok: false,
      message: role.hint && exit === 1 ? `${message} ${role.hint}` : message,
      exit,
    };
  }
}
