/**
 * What only SQLite can do to a local store's file (a Deno KV store is one SQLite database):
 * copy it consistently while others write to it, check it, and tell whether anyone has it open.
 * A plain file copy of a live store can be torn, and its newest commits may sit in `-wal`.
 */
import * as sqlite from "node:sqlite";
import { partialName } from "./work_files.ts";
import { NEVER_COPIED } from "../key_kinds.ts";

/**
 * Why this process can't copy a live store, or null when it can. `VACUUM INTO` attaches the
 * copy, and Deno lets SQLite attach only where the process has every permission (`deno task
 * admin` runs with them); Deno 2.5 refuses it in any case.
 */
export function backupUnsupported(): string | null {
  try {
    const db = new sqlite.DatabaseSync(":memory:");
    try {
      db.exec(`VACUUM INTO ':memory:'`);
      return null;
    } finally {
      db.close();
    }
  } catch (e) {
    return `this process can't copy a live SQLite store: VACUUM INTO fails (${firstLine(e)}); ` +
      `backups need Deno 2.9 or later (this is ${Deno.version.deno}) with every permission, ` +
      "as `deno task admin` runs";
  }
}

/**
 * Copies the store at `from` into the new file `to` page by page (SQLite's online backup), as of
 * one instant, where `VACUUM INTO` can't run (a service's own process, without every
 * permission): a copy to read and delete, as an export's, never one to keep, since pages the
 * store freed come along as they are.
 */
export async function snapshotStore(from: string, to: string): Promise<void> {
  const db = new sqlite.DatabaseSync(from);
  try {
    db.exec("PRAGMA busy_timeout = 10000");
    await Deno.writeFile(to, new Uint8Array(), { createNew: true, mode: 0o600 });
    await sqlite.backup(db, to);
  } finally {
    db.close();
  }
}

const quoted = (path: string) => `'${path.replaceAll("'", "''")}'`;

/**
 * Copies the store at `from` into the new file `to` as of one instant (the commits made before
 * it, none after), compacted: `VACUUM INTO` reads in one transaction while writers go on in the
 * WAL, and rewrites every page, so what deleting freed in the store is not in the copy. Returns
 * when the copy's transaction began. The copy is made under a hidden temporary name, readable by
 * its owner only (it holds every message), and given the name `to` only once whole
 * (`publishFile`): a copy cut short never bears a backup's name. What is never stored for good
 * (ephemeral messages on their way to other instances) and what had expired are taken out of the
 * copy, which is then compacted again: no byte of them is left, not even in a free page.
 */
export async function copyStore(from: string, to: string): Promise<{ takenAt: Date }> {
  const partial = partialName(to);
  await Deno.writeFile(partial, new Uint8Array(), { createNew: true, mode: 0o600 });
  let takenAt: Date;
  const db = new sqlite.DatabaseSync(from);
  try {
    db.exec("PRAGMA busy_timeout = 10000");
    takenAt = new Date();
    db.exec(`VACUUM INTO ${quoted(partial)}`);
    leaveOut(partial, { prefixes: NEVER_COPIED, expiredBy: takenAt.getTime() });
  } catch (e) {
    await Deno.remove(partial).catch(() => {});
    throw e;
  } finally {
    db.close();
  }
  await publishFile(partial, to);
  return { takenAt };
}

/**
 * Deletes from the store file `path` the keys under each prefix and those expired by `expiredBy`
 * (which Deno KV leaves until it sweeps them), then rebuilds the file: SQLite's secure_delete
 * zeroes a deleted row but not always the overflow pages a large value spills into.
 */
function leaveOut(
  path: string,
  { prefixes, expiredBy }: { prefixes: readonly string[]; expiredBy: number },
) {
  const db = new sqlite.DatabaseSync(path);
  try {
    db.exec("PRAGMA secure_delete = ON");
    const drop = db.prepare("DELETE FROM kv WHERE k >= ? AND k < ?");
    let deleted = 0;
    for (const prefix of prefixes) deleted += Number(drop.run(...keyRange(prefix)).changes);
    deleted += Number(
      db.prepare("DELETE FROM kv WHERE expiration_ms >= 0 AND expiration_ms <= ?").run(expiredBy)
        .changes,
    );
    if (deleted > 0) db.exec("VACUUM");
  } finally {
    db.close();
  }
}

/**
 * The bytes of Deno KV's keys whose first part is the string `first`, as a half-open range: a
 * string part is encoded as 0x02, its UTF-8 bytes, 0x00 (none of our prefixes holds a 0x00).
 */
function keyRange(first: string): [Uint8Array, Uint8Array] {
  const name = new TextEncoder().encode(first);
  const start = new Uint8Array([0x02, ...name, 0x00]);
  return [start, new Uint8Array([0x02, ...name, 0x01])];
}

/**
 * Whether a process holds the SQLite file at `path` open, as a backup's copy being written or an
 * export's copy being read is: every open connection holds a lock an exclusive one must wait for.
 * A file that is not a database at all says nothing (false).
 */
export function inUse(path: string): boolean {
  let db: sqlite.DatabaseSync;
  try {
    db = new sqlite.DatabaseSync(path);
  } catch {
    return false;
  }
  try {
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("COMMIT");
    return false;
  } catch (e) {
    return /locked|busy/i.test(String(e));
  } finally {
    db.close();
  }
}

/**
 * Gives a whole file written as `partial` its name `file`, never over one that exists: a hard
 * link fails where `file` is taken (then the partial file is removed and the error thrown).
 */
export async function publishFile(partial: string, file: string): Promise<void> {
  try {
    await Deno.link(partial, file);
  } finally {
    await Deno.remove(partial).catch(() => {});
  }
}

/** The tables Deno KV makes in its SQLite file: a database with others, or some missing, isn't one. */
const KV_TABLES = ["data_version", "kv", "migration_state"];

/**
 * Whether the SQLite file at `path` has Deno KV's tables: any other database (or none) is not a
 * store, even one with a table named `kv` of its own. Throws when it is not SQLite at all.
 */
export function hasKvTables(path: string): boolean {
  const db = new sqlite.DatabaseSync(path, { readOnly: true });
  try {
    const rows = db.prepare(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${
        KV_TABLES.map(() => "?").join(", ")
      })`,
    ).all(...KV_TABLES) as { name: string }[];
    return rows.length === KV_TABLES.length;
  } finally {
    db.close();
  }
}

/** SQLite's integrity check of a store file: "ok", or what it found (first lines). */
export function integrityOf(path: string): string {
  const db = new sqlite.DatabaseSync(path, { readOnly: true });
  try {
    const rows = db.prepare("PRAGMA integrity_check").all() as { integrity_check: string }[];
    return rows.slice(0, 3).map((r) => r.integrity_check).join("; ");
  } finally {
    db.close();
  }
}

/**
 * Runs `fn` when nobody else has the store at `path` open, having first folded its WAL into the
 * file so that the file alone holds every commit; null, and `fn` not run, when a service or the
 * CLI has it open. SQLite's exclusive lock tells: every open connection holds a shared lock.
 */
export async function whileClosed<T>(path: string, fn: () => Promise<T>): Promise<T | null> {
  const db = new sqlite.DatabaseSync(path);
  try {
    db.exec("PRAGMA busy_timeout = 0");
    try {
      db.exec("PRAGMA locking_mode = EXCLUSIVE");
      db.exec("BEGIN EXCLUSIVE");
      db.exec("COMMIT");
    } catch (e) {
      if (/locked|busy/i.test(String(e))) return null;
      throw e;
    }
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return await fn();
}

const firstLine = (e: unknown) => String((e as Error)?.message ?? e).split("\n")[0];
