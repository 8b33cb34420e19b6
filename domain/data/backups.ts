/**
 * Backups of a local store (decisions.md, "Data over time"): `admin backup` copies it as of one
 * instant while services and the CLI write to it; `admin restore`, with them stopped, puts a
 * checked copy in its place and keeps the store it replaces. A store that is not a local file
 * (KV Connect, Deno Deploy) has no file to copy: export and import move those.
 */
import { exists } from "../../core/files.ts";
import { invalid } from "../../core/errors.ts";
import { isFilePath, type Settings, SettingsError } from "../../core/settings.ts";
import { hasLayoutRecord, LAYOUT_VERSION, readLayout } from "../../kv/store/migrations.ts";
import {
  backupUnsupported,
  copyStore,
  hasKvTables,
  integrityOf,
  inUse,
  whileClosed,
} from "../../kv/store/store_file.ts";
import { removeLeftovers } from "../../kv/store/work_files.ts";
import { wrapStore } from "../../kv/store/open.ts";
import { loadKeyring, opensCheck } from "./app_key.ts";
import { readAppKeyCheck } from "../../kv/service/app_key_check.ts";

export interface BackupTaken {
  file: string;
  bytes: number;
  /** The instant the copy holds: every commit made before it, none after. */
  taken_at: string;
}

export interface Restored {
  restored_from: string;
  /** Where the store it replaced is kept; null when there was none. */
  replaced_kept_as: string | null;
}

/** Copies the store KV_PATH names into the new file `to`. */
export async function takeBackup(settings: Settings, to: string): Promise<BackupTaken> {
  const path = localStore(settings, "backup");
  const unsupported = backupUnsupported();
  if (unsupported) throw new SettingsError(`backup: ${unsupported}.`);
  if (!await exists(path)) throw new SettingsError(`KV_PATH: there is no store at ${path}.`);
  await requireNewFile("to", to, "a backup");
  await removeLeftoversNear(settings, to);
  const { takenAt } = await copyStore(path, to).catch((e) => {
    throw writeRefused("to", to, e);
  });
  return { file: to, bytes: (await Deno.stat(to)).size, taken_at: takenAt.toISOString() };
}

/**
 * Removes what backups and exports killed part way left beside `to` and beside the store: each
 * may be a whole copy of the store.
 */
export async function removeLeftoversNear(settings: Settings, to: string): Promise<void> {
  const folders = new Set([folderOf(to)]);
  if (isFilePath(settings.kvPath)) folders.add(folderOf(settings.kvPath));
  for (const folder of folders) await removeLeftovers(folder, inUse);
}

/** The folder a file goes into. */
export const folderOf = (file: string) => {
  const slash = file.lastIndexOf("/");
  return slash < 0 ? "." : file.slice(0, slash) || "/";
};

/** Refuses a `--flag` file that exists or whose folder doesn't, in the flag's own words. */
export async function requireNewFile(flag: string, file: string, what: string) {
  if (await exists(file)) {
    throw invalid(
      flag,
      `--${flag}: ${file} already exists; ${what} never overwrites, choose a new file.`,
    );
  }
  const folder = folderOf(file);
  if (!await exists(folder)) {
    throw invalid(
      flag,
      `--${flag}: the folder ${folder} does not exist; create it first (mkdir -p ${folder}).`,
    );
  }
}

/** A file that couldn't be written, in one line that says what to do; other errors as they are. */
export function writeRefused(flag: string, file: string, e: unknown): unknown {
  if (
    e instanceof Deno.errors.PermissionDenied ||
    /permission denied|readonly|read-only/i.test(String(e))
  ) {
    return invalid(
      flag,
      `--${flag}: can't write ${file} (permission denied): choose a folder this user may write to, such as the store's own. Nothing was written.`,
    );
  }
  return e;
}

/**
 * Replaces the store KV_PATH names with the backup `from`, once it passes SQLite's integrity
 * check and opens with this APP_KEY and a layout this release knows; the replaced store is kept
 * beside it. Refused, changing nothing, while anything has the store open.
 */
export async function restoreBackup(settings: Settings, from: string): Promise<Restored> {
  const path = localStore(settings, "restore");
  await requireStoreFile(from);
  const integrity = checkedIntegrity(from);
  if (integrity !== "ok") {
    throw invalid(
      "from",
      `--from: ${from} fails SQLite's integrity check (${integrity}); nothing was changed.`,
    );
  }
  const candidate = `${path}.restoring`;
  await Deno.remove(candidate).catch(() => {});
  await Deno.copyFile(from, candidate);
  try {
    await checkOpens(settings, candidate, from);
    if (!await exists(path)) {
      await Deno.rename(candidate, path);
      return { restored_from: from, replaced_kept_as: null };
    }
    const kept = `${path}.replaced-${new Date().toISOString().replaceAll(":", "-")}`;
    const swapped = await whileClosed(path, async () => {
      await Deno.rename(path, kept);
      // The WAL was folded into the file (whileClosed): one left with commits goes with it; the
      // shared-memory index is SQLite's scratch, remade on open, and goes.
      const wal = await Deno.stat(path + "-wal").catch(() => null);
      if (wal && wal.size > 0) await Deno.rename(path + "-wal", kept + "-wal");
      else await Deno.remove(path + "-wal").catch(() => {});
      await Deno.remove(path + "-shm").catch(() => {});
      await Deno.rename(candidate, path);
      return true;
    });
    if (!swapped) {
      throw new SettingsError(
        `restore: the store at ${path} is open (a service or the CLI runs on it); stop them all first. Nothing was changed.`,
      );
    }
    return { restored_from: from, replaced_kept_as: kept };
  } finally {
    await Deno.remove(candidate).catch(() => {});
  }
}

/** KV_PATH, when it names a local file; else the one line that points to export. */
function localStore(settings: Settings, what: string): string {
  if (isFilePath(settings.kvPath)) return settings.kvPath;
  throw new SettingsError(
    `${what}: KV_PATH is not a local file (${
      settings.kvPath ?? "Deno Deploy KV"
    }), so there is no file to ${
      what === "backup" ? "copy" : "replace"
    }; move data to and from such a store with \`deno task admin export\` and \`import\`.`,
  );
}

/** The `--flag` file's information, once it is known to exist and be readable; else one line. */
export async function requireReadable(flag: string, file: string): Promise<Deno.FileInfo> {
  try {
    const info = await Deno.stat(file);
    if (info.isDirectory) {
      throw invalid(
        flag,
        `--${flag}: ${file} is a folder; give the file in it. Nothing was changed.`,
      );
    }
    (await Deno.open(file, { read: true })).close();
    return info;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw invalid(flag, `--${flag}: there is no file ${file}.`);
    }
    if (e instanceof Deno.errors.PermissionDenied) {
      throw invalid(
        flag,
        `--${flag}: can't read ${file} (permission denied): run the command as a user who may read it, or make it readable (chmod or chown). Nothing was changed.`,
      );
    }
    throw e;
  }
}

/**
 * Refuses, in one line, a `--from` that is missing, unreadable, empty, or a file (SQLite or not)
 * that isn't a store of this service: only a store's backup may replace the store.
 */
async function requireStoreFile(from: string) {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(from);
    (await Deno.open(from, { read: true })).close();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw invalid("from", `--from: there is no file ${from}.`);
    }
    if (e instanceof Deno.errors.PermissionDenied) {
      throw invalid(
        "from",
        `--from: can't read ${from} (permission denied): run restore as a user who may read it, or make it readable (chmod or chown). Nothing was changed.`,
      );
    }
    throw e;
  }
  const refuse = (why: string) =>
    invalid(
      "from",
      `--from: ${from} ${why}: it is not a backup of this service's store. Nothing was changed.`,
    );
  if (!info.isFile) throw refuse("is not a file");
  if (info.size === 0) throw refuse("is empty (0 bytes)");
  let tables: boolean;
  try {
    tables = hasKvTables(from);
  } catch (e) {
    throw refuse(`is not a readable SQLite database (${firstLine(e)})`);
  }
  if (!tables) throw refuse("is an SQLite database without Deno KV's tables");
}

function checkedIntegrity(file: string): string {
  try {
    return integrityOf(file);
  } catch (e) {
    throw invalid("from", `--from: ${file} is not a store (${firstLine(e)}); nothing was changed.`);
  }
}

/** That the copy is a store this release and this APP_KEY can open. */
async function checkOpens(settings: Settings, candidate: string, from: string) {
  const raw = await Deno.openKv(candidate).catch((e) => {
    throw invalid(
      "from",
      `--from: ${from} can't be opened as a store (${
        firstLine(e)
      }): it is not a backup of this service's store. Nothing was changed.`,
    );
  });
  const kv = wrapStore(raw, candidate, { turns: false });
  try {
    const layout = await readLayout(kv);
    const sealed = (await readAppKeyCheck(kv)).value;
    if (layout === null || (!sealed && !await hasLayoutRecord(kv))) {
      throw invalid(
        "from",
        `--from: ${from} is a Deno KV store, but not one this service ran on (no layout record, no key check); nothing was changed.`,
      );
    }
    if (layout > LAYOUT_VERSION) {
      throw invalid(
        "from",
        `--from: ${from} has layout version ${layout}, newer than this release knows (${LAYOUT_VERSION}); restore it with the release that made it. Nothing was changed.`,
      );
    }
    const keyring = await loadKeyring(settings, undefined, { existing: true });
    if (sealed && !await opensCheck(keyring, sealed)) {
      throw invalid(
        "from",
        `--from: ${from} was made with another APP_KEY than this one; restore it with that key (APP_KEY, or app.key beside the store). Nothing was changed.`,
      );
    }
  } finally {
    kv.close();
  }
}

const firstLine = (e: unknown) => String((e as Error)?.message ?? e).split("\n")[0];
