/**
 * Moving a workspace between stores (decisions.md, "Moving a workspace between stores"): `admin
 * export` writes every record of a store to a file of JSON lines (docs/export-format.md), `admin
 * import` writes such a file into an empty store, of any kind the service opens. Secrets stay
 * sealed, so the target must use the source's APP_KEY: checked before anything is written.
 */
import { exists } from "../../core/files.ts";
import { ConflictError, invalid } from "../../core/errors.ts";
import { isFilePath, type Settings, SettingsError } from "../../core/settings.ts";
import { VERSION } from "../../core/version.ts";
import { keys } from "../../kv/keys.ts";
import { LAYOUT_VERSION } from "../../kv/store/migrations.ts";
import { openStore, wrapStore } from "../../kv/store/open.ts";
import { exportRecords, importRecords } from "../../kv/export/store_export.ts";
import {
  checkFile,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type Header,
  recordsOf,
  writeLines,
} from "./export_file.ts";
import {
  backupUnsupported,
  copyStore,
  publishFile,
  snapshotStore,
} from "../../kv/store/store_file.ts";
import { partialName, workName } from "../../kv/store/work_files.ts";
import { logPendingMarkers } from "../../kv/stream/stream_markers.ts";
import { signal } from "../../kv/outbox/job_moves.ts";
import { removeLeftoversNear, requireNewFile, requireReadable, writeRefused } from "./backups.ts";
import { requireReadableByService } from "./service.ts";
import {
  beat,
  HEARTBEAT_MS,
  type ImportState,
  refuseWhileAnotherRuns,
  startImport,
} from "./import_state.ts";
import { loadKeyring, opensCheck } from "./app_key.ts";
import type { Store } from "../../kv/store/store.ts";

/**
 * Writes the store KV_PATH names to the new file `to`. A local store is exported from a copy
 * made as of one instant (kv/store/store_file.ts), so the export holds one instant as a backup does;
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
    const records = await writeLines(partial, {
      header,
      records: exportRecords(source.kv),
      keyring,
    })
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
  const kv = await openStore(settings, { existing: true });
  kv.close();
  const copyPath = workName(to, "copy");
  // Read, never kept: where this process can't compact a copy (the service's own), a page copy.
  const unsupported = backupUnsupported();
  if (!unsupported) await copyStore(settings.kvPath, copyPath);
  else {
    await snapshotStore(settings.kvPath, copyPath).catch(async () => {
      await Deno.remove(copyPath).catch(() => {});
      throw new SettingsError(`export: ${unsupported}.`);
    });
  }
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
