/**
 * An import's state in its store (decisions.md, "Moving a workspace between stores"): which
 * export it writes, which process writes it and when it last said so, so that an import cut short
 * is finished by the next and a second one meanwhile is refused.
 */
import type { Keyring } from "../../core/keyring.ts";
import { type Settings, SettingsError } from "../../core/settings.ts";
import { keys } from "../../kv/keys.ts";
import { processRuns } from "../../kv/store/work_files.ts";
import { listTeams } from "../../kv/workspace.ts";
import type { Store } from "../../kv/store/store.ts";
import type { Plan } from "../../kv/store/plan.ts";
import type { Header } from "./export_file.ts";
import { opensCheck } from "./app_key.ts";

/**
 * What an import running or cut short leaves, so that running it again finishes it and a second
 * one meanwhile is refused: the process (`pid` on `host`) and when it last said it was at work.
 * States written before 0.32.0 name no process: such an import counts as cut short.
 */
export interface ImportState {
  export_id: string;
  started_at: string;
  finished_at: string | null;
  pid?: number;
  host?: string;
  heartbeat_at?: string;
}

/**
 * How often a running import says so, and how long after its last word it holds nothing: a
 * process silent that long is gone (or hung), wherever it runs, and its pid may be another's.
 */
export const HEARTBEAT_MS = 2_000;
const SILENT_AFTER_MS = 30_000;

/**
 * This machine's name, as an import state names where it runs: the service's own process may not
 * ask the system (no `--allow-sys`), and then takes what its environment says.
 */
function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return Deno.env.get("HOSTNAME") ?? "unknown";
  }
}

/** This process, as an import state names it. */
const thisProcess = () => ({
  pid: Deno.pid,
  host: hostName(),
  heartbeat_at: new Date().toISOString(),
});

/**
 * Whether the import a state names may still be at work: it said so lately, and on this host its
 * process runs (where /proc tells; a zombie, killed but not reaped, does not).
 */
async function stillRunning(state: ImportState): Promise<boolean> {
  if (state.finished_at !== null || state.pid === undefined) return false;
  const spoke = Date.parse(state.heartbeat_at ?? state.started_at);
  if (!(Date.now() - spoke < SILENT_AFTER_MS)) return false;
  return state.host === hostName() ? await processRuns(state.pid) ?? true : true;
}

/** Says the import this process runs is still at work (kept only while the state is ours). */
export async function beat(kv: Store) {
  const entry = await kv.get<ImportState>(keys.importState());
  if (entry.value?.pid !== Deno.pid || entry.value.finished_at !== null) return;
  const next = { ...entry.value, heartbeat_at: new Date().toISOString() };
  await kv.atomic().check(entry).set(keys.importState(), next).commit();
}

/** One line naming the import that runs on this store, if one does: the second never starts. */
export async function refuseWhileAnotherRuns(kv: Store) {
  const state = (await kv.get<ImportState>(keys.importState())).value;
  if (!state || !await stillRunning(state)) return;
  const where = state.host === hostName() ? "" : ` on ${state.host}`;
  throw new SettingsError(
    `import: another import into this store is running (pid ${state.pid}${where}, started ${state.started_at}); wait for it to finish, or stop it and run this again to finish its work. Nothing was written.`,
  );
}

/**
 * Refuses a store that holds a team, unless an import of this export was cut short in it: then
 * whether it resumes that one. A store a service has only started on (its layout, its key check,
 * its address) counts as empty, so a workspace can move to a service deployed first; its key
 * check must open with this APP_KEY, as the service's would. A new import's state goes in the
 * commit of its first records (`first`), so no store ever holds what it wrote without it.
 */
export async function startImport(
  kv: Store,
  { settings, header, keyring }: { settings: Settings; header: Header; keyring: Keyring },
): Promise<{ resuming: boolean; first?: (op: Plan) => void }> {
  const state = await kv.get<ImportState>(keys.importState());
  if (state.value?.export_id === header.export_id && state.value.finished_at === null) {
    // Cut short: this process finishes it, and says so, unless another took it up meanwhile.
    const mine = { ...state.value, ...thisProcess() };
    if (!(await kv.atomic().check(state).set(keys.importState(), mine).commit()).ok) {
      throw new SettingsError("import: another import started meanwhile. Nothing was written.");
    }
    return { resuming: true };
  }
  const teams = await listTeams(kv);
  if (teams.length > 0) {
    const named = teams.slice(0, 3).map((t) => `“${t.name}”`).join(", ");
    throw new SettingsError(
      `import: the store at KV_PATH (${settings.kvPath}) holds ${teams.length} team${
        teams.length === 1 ? "" : "s"
      } (${named}${
        teams.length > 3 ? ", ..." : ""
      }); an import writes only into a store with no team. Import into a new KV_PATH, or back this store up and remove it first. Nothing was written.`,
    );
  }
  const own = (await kv.get<string>(keys.appKeyCheck())).value;
  if (own && !await opensCheck(keyring, own)) {
    throw new SettingsError(
      `import: a service started on the store at KV_PATH (${settings.kvPath}) with another APP_KEY; use the export's key for both (APP_KEY) and start that service with it. Nothing was written.`,
    );
  }
  const started: ImportState = {
    export_id: header.export_id,
    started_at: new Date().toISOString(),
    finished_at: null,
    ...thisProcess(),
  };
  // Over what was read: another import's state, left by a process that is gone, gives way; one
  // that started meanwhile fails the first commit's check, before anything of this one lands.
  return {
    resuming: false,
    first: (op) => {
      op.check(state).set(keys.importState(), started);
      if (header.app_key_check) op.set(keys.appKeyCheck(), header.app_key_check);
    },
  };
}
