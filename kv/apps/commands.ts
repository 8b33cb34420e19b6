/**
 * The slash commands of each team (decisions.md, "Slash commands"): a name is the team's once,
 * held by the app whose install brought it, so two apps can't both answer `/deploy`.
 */
import { keys } from "../keys.ts";
import type { Plan } from "../store/plan.ts";
import type { Store } from "../store/store.ts";

/** A command name of a team, and the app that answers it. */
export interface TeamCommand {
  command: string;
  app_id: string;
}

export const getCommand = (kv: Store, teamId: string, command: string) =>
  kv.get<TeamCommand>(keys.teamCommand(teamId, command));

/** The team's commands, with the version every change of them rewrites: a change checks it. */
export async function teamCommands(kv: Store, teamId: string) {
  const version = await kv.get(keys.teamCommandsVersion(teamId));
  return { version, commands: await listTeamCommands(kv, teamId) };
}

/** Marks the team's commands changed in `plan`: other changes read before it fail their check. */
export function touchCommands(plan: Plan, teamId: string): void {
  plan.set(keys.teamCommandsVersion(teamId), Date.now());
}

export function putCommand(plan: Plan, teamId: string, command: TeamCommand): void {
  plan.set(keys.teamCommand(teamId, command.command), command);
}

export function removeCommand(plan: Plan, teamId: string, command: string): void {
  plan.delete(keys.teamCommand(teamId, command));
}

/** The team's commands, by name. */
export async function listTeamCommands(kv: Store, teamId: string): Promise<TeamCommand[]> {
  const out: TeamCommand[] = [];
  for await (const e of kv.list<TeamCommand>({ prefix: keys.teamCommands(teamId) })) {
    out.push(e.value);
  }
  return out;
}
