/**
 * Moving a workspace between stores (decisions.md, "Moving a workspace between stores"): `admin
 * export` writes every record of a store to a file of JSON lines (docs/export-format.md), `admin
 * import` writes such a file into an empty store, of any kind the service opens. Secrets stay
 * sealed, so the target must use the source's APP_KEY: checked before anything is written.
 */
import { exists } from "../../core/files.ts";
import type { Keyring } from "../../core/keyring.ts";
import { ConflictError, invalid } from "../../core/errors.ts";
import { isFilePath, type Settings, SettingsError } from "../../core/settings.ts";
import { VERSION } from "../../core/version.ts";
import { keys } from "../../kv/keys.ts";
import { LAYOUT_VERSION } from "../../kv/migrations.ts";
import { openStore, wrapStore } from "../../kv/open.ts";
import { exportRecords, importRecords } from "../../kv/store_export.ts";
import {
  checkFile,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type Header,
  recordsOf,
  writeLines,
} from "./export_file.ts";
import { backupUnsupported, copyStore, publishFile } from "../../kv/store_file.ts";
import { partialName, processRuns, workName } from "../../kv/work_files.ts";
import { logPendingMarkers } from "../../kv/stream_markers.ts";
import { signal } from "../../kv/job_moves.ts";
import { listTeams } from "../../kv/workspace.ts";
import {
  removeLeftoversNear,
  requireNewFile,
  requireReadable,
  writeRefused,
} from "./backups.ts";
import { requireReadableByService } from "./service.ts";
import { loadKeyring, opensCheck } from "./app_key.ts";
import type { Store } from "../../kv/store.ts";
import type { Plan } from "../../kv/plan.ts";

/**
 * What an import running or cut short leaves, so that running it again finishes it and a second
 * one meanwhile is refused: the process (`pid` on `host`) and when it last said it was at work.
 * States written before 0.32.0 name no process: such an import counts as cut short.
 */
interface ImportState {
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
const HEARTBEAT_MS = 2_000;
const SILENT_AFTER_MS = 30_000;

/** This process, as an import state names it. */
const thisProcess = () => ({
  pid: Deno.pid,
  host: Deno.hostname(),
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
  return state.host === Deno.hostname() ? await processRuns(state.pid) ?? true : true;
}

/**
 * Writes the store KV_PATH names to the new file `to`. A local store is exported from a copy
 * made as of one instant (kv/store_file.ts), so the export holds one instant as a backup does;
 * a remote one is read as it is, so writes to it should be stopped first (the README says how).
 */
export async function exportStore(
  settings: Settings,
  to: string,
): Promise<{ file: string; records: number }> {
  await requireNewFile("to", to, "an export");
  await removeLeftoversNear(settings, to);
  const source = await openSource(settings, to);
  try {
    // The key must open the source's check: the target will be checked against it.
    const keyring = await loadKeyring(settings, source.kv, { existing: true });
    const sealed = (await source.kv.get<string>(keys.appKeyCheck())).value;
    const header: Header = {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      export_id: crypto.randomUUID(),
      exported_at: new Date().toISOString(),
      service_version: VERSION,
      layout: LAYOUT_VERSION,
      app_key_check: sealed,
    };
    const partial = partialName(to);
    const records = await writeLines(partial, { header, records: exportRecords(source.kv), keyring })
      .catch((e) => {
        throw writeRefused("to", to, e);
      });
    await publishFile(partial, to);
    return { file: to, records };
  } finally {
    await source.close();
  }
}

/**
 * The store to export: a local one through a copy of it as of now, a remote one as it is. The
 * copy holds every message: it is made beside the export, hidden and private, and a later export,
 * backup or start removes it if this process is killed before it does.
 */
async function openSource(
  settings: Settings,
  to: string,
): Promise<{ kv: Store; close(): Promise<void> }> {
  if (!isFilePath(settings.kvPath)) {
    const kv = await openStore(settings, { existing: true });
    return { kv, close: () => Promise.resolve(kv.close()) };
  }
  const unsupported = backupUnsupported();
  if (unsupported) throw new SettingsError(`export: ${unsupported}.`);
  const kv = await openStore(settings, { existing: true });
  kv.close();
  const copyPath = workName(to, "copy");
  await copyStore(settings.kvPath, copyPath);
  const copy = wrapStore(await Deno.openKv(copyPath), copyPath, { turns: false });
  return {
    kv: copy,
    close: async () => {
      copy.close();
      for (const file of [copyPath, `${copyPath}-wal`, `${copyPath}-shm`]) {
        await Deno.remove(file).catch(() => {});
      }
    },
  };
}

/**
 * Writes the export `from` into the store KV_PATH names, which must hold no team (what a service
 * writes for itself on a store it started on doesn't count), or what an import of the same export
 * cut short left (then it finishes it). The whole file is checked first, before anything is
 * written: its format, every record, its digest, that it is whole, and that this APP_KEY opens
 * its key check (and the target's, where a service started on it).
 */
export async function importStore(settings: Settings, from: string): Promise<{ records: number }> {
  await requireReadable("from", from);
  const keyring = await loadKeyring(settings, undefined, { existing: true });
  const { header, signed } = await checkFile(from, keyring);
  if (header.app_key_check && !await opensCheck(keyring, header.app_key_check)) {
    throw invalid(
      "from",
      `--from: ${from} was exported from a store with another APP_KEY; import it with that key (APP_KEY). Nothing was written.`,
    );
  }
  if (signed === "mismatch") {
    throw invalid(
      "from",
      `--from: ${from} does not carry this APP_KEY's signature: it was changed after the export (or exported under another key); export again. Nothing was written.`,
    );
  }
  if (signed === "unsigned") {
    throw invalid(
      "from",
      `--from: ${from} is not signed: it was written by a release before 0.32.0, or its signature was taken off; export again with this release (or import it with the release that wrote it). Nothing was written.`,
    );
  }
  const kv = await openTarget(settings);
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  try {
    // Before anything that could wait on another writer: a second import is told at once.
    await refuseWhileAnotherRuns(kv);
    await requireReadableByService(kv, `import --from ${from}`);
    const { resuming, first } = await startImport(kv, { settings, header, keyring });
    heartbeat = setInterval(() => void beat(kv).catch(() => {}), HEARTBEAT_MS);
    const records = await importRecords(kv, recordsOf(from), { resuming, first }).catch((e) => {
      if (!(e instanceof ConflictError)) throw e;
      throw new SettingsError("import: another import started meanwhile. Nothing was written.");
    });
    // What this import (or the one cut short before it) committed is in the stream's log, as the
    // service would have put it there: a resumed import ends exactly as one run straight through.
    await kv.settled();
    await logPendingMarkers(kv);
    clearInterval(heartbeat);
    const done: ImportState = {
      ...(await kv.get<ImportState>(keys.importState())).value!,
      finished_at: new Date().toISOString(),
    };
    // Engines pull the pending deliveries the import brought.
    const finishing = kv.atomic().set(keys.importState(), done);
    signal(finishing);
    await finishing.commit();
    return { records };
  } finally {
    clearInterval(heartbeat);
    kv.close();
  }
}

/** Says the import this process runs is still at work (kept only while the state is ours). */
async function beat(kv: Store) {
  const entry = await kv.get<ImportState>(keys.importState());
  if (entry.value?.pid !== Deno.pid || entry.value.finished_at !== null) return;
  const next = { ...entry.value, heartbeat_at: new Date().toISOString() };
  await kv.atomic().check(entry).set(keys.importState(), next).commit();
}

/** One line naming the import that runs on this store, if one does: the second never starts. */
async function refuseWhileAnotherRuns(kv: Store) {
  const state = (await kv.get<ImportState>(keys.importState())).value;
  if (!state || !await stillRunning(state)) return;
  const where = state.host === Deno.hostname() ? "" : ` on ${state.host}`;
  throw new SettingsError(
    `import: another import into this store is running (pid ${state.pid}${where}, started ${state.started_at}); wait for it to finish, or stop it and run this again to finish its work. Nothing was written.`,
  );
}

/** The target, opened as it is: an import writes the source's layout, and migrates nothing. */
async function openTarget(settings: Settings): Promise<Store> {
  if (isFilePath(settings.kvPath) && !await exists(settings.kvPath)) {
    const folder = settings.kvPath.replace(/\/[^/]*$/, "") || ".";
    if (!await exists(folder)) {
      throw new SettingsError(`KV_PATH: the folder ${folder} does not exist; create it first.`);
    }
  }
  if (!isFilePath(settings.kvPath)) return await openStore(settings, { existing: true });
  return wrapStore(await Deno.openKv(settings.kvPath), settings.kvPath, { turns: false });
}

/**
 * Refuses a store that holds a team, unless an import of this export was cut short in it: then
 * whether it resumes that one. A store a service has only started on (its layout, its key check,
 * its address) counts as empty, so a workspace can move to a service deployed first; its key
 * check must open with this APP_KEY, as the service's would. A new import's state goes in the
 * commit of its first records (`first`), so no store ever holds what it wrote without it.
 */
async function startImport(
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
