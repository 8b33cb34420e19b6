/**
 * Backups of a local store (decisions.md, "Data over time"): `admin backup` copies it as of one
 * instant while services and the CLI write to it; `admin restore`, with them stopped, puts a
 * checked copy in its place and keeps the store it replaces. A store that is not a local file
 * (KV Connect, Deno Deploy) has no file to copy: export and import move those.
 */
import { exists } from "../core/files.ts";
import { invalid } from "../core/errors.ts";
import { isFilePath, type Settings, SettingsError } from "../core/settings.ts";
import { LAYOUT_VERSION, readLayout } from "../kv/migrations.ts";
import { backupUnsupported, copyStore, integrityOf, whileClosed } from "../kv/store_file.ts";
import { wrapStore } from "../kv/open.ts";
import { loadKeyring, opensCheck } from "./app_key.ts";
import { readAppKeyCheck } from "../kv/app_key_check.ts";

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
  if (await exists(to)) {
    throw invalid(
      "to",
      `--to: ${to} already exists; a backup never overwrites, choose a new file.`,
    );
  }
  const { takenAt } = await copyStore(path, to);
  return { file: to, bytes: (await Deno.stat(to)).size, taken_at: takenAt.toISOString() };
}

/**
 * Replaces the store KV_PATH names with the backup `from`, once it passes SQLite's integrity
 * check and opens with this APP_KEY and a layout this release knows; the replaced store is kept
 * beside it. Refused, changing nothing, while anything has the store open.
 */
export async function restoreBackup(settings: Settings, from: string): Promise<Restored> {
  const path = localStore(settings, "restore");
  if (!await exists(from)) throw invalid("from", `--from: there is no file ${from}.`);
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
      for (const side of ["-wal", "-shm"]) {
        await Deno.rename(path + side, kept + side).catch(() => {});
      }
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

function checkedIntegrity(file: string): string {
  try {
    return integrityOf(file);
  } catch (e) {
    throw invalid("from", `--from: ${file} is not a store (${firstLine(e)}); nothing was changed.`);
  }
}

/** That the copy is a store this release and this APP_KEY can open. */
async function checkOpens(settings: Settings, candidate: string, from: string) {
  const kv = wrapStore(await Deno.openKv(candidate), candidate, { turns: false });
  try {
    const layout = await readLayout(kv);
    if (layout !== null && layout > LAYOUT_VERSION) {
      throw invalid(
        "from",
        `--from: ${from} has layout version ${layout}, newer than this release knows (${LAYOUT_VERSION}); restore it with the release that made it. Nothing was changed.`,
      );
    }
    const keyring = await loadKeyring(settings, undefined, { existing: true });
    const sealed = (await readAppKeyCheck(kv)).value;
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
