import { exists, keepPrivate } from "../../core/files.ts";
import { dirname } from "node:path";
import { isFilePath, type Settings, SettingsError } from "../../core/settings.ts";
import { LAYOUT_VERSION, migrate, requireLayout } from "./migrations.ts";
import { Store } from "./store.ts";
import { WriteTurns } from "./write_turns.ts";
import { removeLeftovers } from "./work_files.ts";
import { log } from "../../core/log.ts";

/** The KV location used when KV_PATH is unset: its folder is made on first start. */
const DEFAULT_KV_PATH = "./data/kv.sqlite3";

/**
 * Opens the store the settings name, and finds out whether it has queues (kv/store/queue_support.ts).
 * What can't work ends here, in one line naming the setting: a folder that does not exist (only
 * the default ./data is made), a KV Connect URL without its access token, a store that won't open.
 * `existing`: for the admin CLI, which never makes a store: a file that isn't there is refused,
 * and nothing is written (no folder, no file, no queue probe).
 */
export async function openStore(
  settings: Settings,
  opts: { existing?: boolean } = {},
): Promise<Store> {
  const path = settings.kvPath;
  if (opts.existing && isFilePath(path) && !await exists(path)) {
    throw new SettingsError(
      `KV_PATH: there is no store at ${path}, and the CLI makes none: start the service with this KV_PATH first, or correct KV_PATH.`,
    );
  }
  if (isFilePath(path)) {
    await ensureFolder(path);
    // What a backup or export killed part way left beside the store: whole copies of it. SQLite
    // tells whether a copy's owner still has it open (imported here only for a local store).
    const { inUse } = await import("./store_file.ts");
    await removeLeftovers(dirname(path), inUse);
    // Made private before SQLite opens it: its -wal and -shm are made with its mode. Never
    // over a store another process made meanwhile.
    if (!opts.existing) {
      await Deno.writeFile(path, new Uint8Array(), { mode: 0o600, createNew: true })
        .catch((e) => {
          if (e instanceof Deno.errors.PermissionDenied) throw unwritable(dirname(path));
          if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
        });
    }
  }
  if (path && /^https?:\/\//.test(path) && !Deno.env.get("DENO_KV_ACCESS_TOKEN")) {
    throw new SettingsError(
      "DENO_KV_ACCESS_TOKEN: required to open the KV Connect URL in KV_PATH; set it to an access token of that database.",
    );
  }
  let raw: Deno.Kv;
  try {
    raw = await Deno.openKv(path);
  } catch (e) {
    if (isFilePath(path) && !await writableFolder(dirname(path))) throw unwritable(dirname(path));
    throw new SettingsError(`KV_PATH: can't open the store at ${where(settings)}: ${firstLine(e)}`);
  }
  const kv = wrapStore(raw, path);
  if (isFilePath(path)) await keepStorePrivate(kv, path);
  try {
    // The CLI never migrates: the service does, at start, and the CLI works on what it made.
    if (opts.existing) await requireLayout(kv);
    else await upgrade(kv);
  } catch (e) {
    kv.close();
    throw e;
  }
  if (settings.deliveryTimers && !opts.existing) await kv.probeQueues(path);
  else kv.forgoQueues();
  return kv;
}

/**
 * The store as the service uses it (kv/store/store.ts), whoever opened it at `path`: on a local file,
 * its writers take turns (kv/store/write_turns.ts) unless `turns` is false.
 */
export function wrapStore(kv: Deno.Kv, path: string | undefined, { turns = true } = {}): Store {
  return new Store(kv, { path, turns: turns && isFilePath(path) ? turnsFor(path) : undefined });
}

/** Migrates the store to this release's layout, saying so when it did. */
async function upgrade(kv: Store): Promise<void> {
  const found = await migrate(kv);
  if (found !== null && found < LAYOUT_VERSION) {
    log.info(`KV: the store's layout was upgraded from version ${found} to ${LAYOUT_VERSION}`);
  }
}

/** The file beside a local store whose lock its writers take turns with (kv/store/write_turns.ts). */
export const turnsFile = (path: string) => `${path}-writer.lock`;

function turnsFor(path: string): WriteTurns | undefined {
  try {
    return new WriteTurns(turnsFile(path));
  } catch (e) {
    log.warn("KV: writers on this store can't take turns; commits may wait on each other", {
      lock_file: turnsFile(path),
      error: firstLine(e),
    });
    return undefined;
  }
}

/** The store's location for messages: a KV Connect URL without credentials in it. */
export const where = (settings: Settings) =>
  settings.kvPath?.replace(/\/\/[^/@]*@/, "//") ?? "Deno Deploy KV";

const firstLine = (e: unknown) => String((e as Error)?.message ?? e).split("\n")[0];

async function ensureFolder(path: string) {
  const folder = dirname(path);
  try {
    if ((await Deno.stat(folder)).isDirectory) return;
    throw new SettingsError(`KV_PATH: ${folder} is not a folder.`);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  // A mistyped path must not quietly become a new, empty store.
  if (path !== DEFAULT_KV_PATH) {
    throw new SettingsError(
      `KV_PATH: the folder ${folder} does not exist; create it first, or correct KV_PATH.`,
    );
  }
  await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
}

/** A bind-mounted folder owned by the host's user is the usual cause (docs/deploy.md). */
const unwritable = (folder: string) =>
  new SettingsError(
    `KV_PATH: the user this service runs as can't write to ${folder}, where the store lives; give that folder to it (for the Docker image's deno user: sudo chown -R 1993:1993 <host folder> && sudo chmod 700 <host folder>), or set KV_PATH to a folder it can write.`,
  );

/** Whether a file can be made in `folder` (the store needs its -wal and -shm beside it). */
async function writableFolder(folder: string): Promise<boolean> {
  const probe = `${folder}/.write-check-${crypto.randomUUID()}`;
  try {
    await Deno.writeFile(probe, new Uint8Array(), { createNew: true, mode: 0o600 });
    await Deno.remove(probe);
    return true;
  } catch {
    return false;
  }
}

/**
 * The store's files are the service's alone (0600): a store made by an older release, or
 * copied in, is tightened at start; one this process can't change is refused in one line.
 */
async function keepStorePrivate(kv: Store, path: string) {
  for (const file of [path, `${path}-wal`, `${path}-shm`, turnsFile(path)]) {
    if (await keepPrivate(file)) continue;
    kv.close();
    throw new SettingsError(
      `KV_PATH: ${file} can be read by other users, and this process can't change that; run \`chmod 600 ${file}\` as its owner.`,
    );
  }
}
