/**
 * What only SQLite can do to a local store's file (a Deno KV store is one SQLite database):
 * copy it consistently while others write to it, check it, and tell whether anyone has it open.
 * A plain file copy of a live store can be torn, and its newest commits may sit in `-wal`.
 */
import * as sqlite from "node:sqlite";

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

const quoted = (path: string) => `'${path.replaceAll("'", "''")}'`;

/**
 * Copies the store at `from` into the new file `to` as of one instant (the commits made before
 * it, none after), compacted: `VACUUM INTO` reads in one transaction while writers go on in the
 * WAL. Returns when the copy's transaction began. `to` is created first, readable by its owner
 * only (it holds every message), and must not exist.
 */
export async function copyStore(from: string, to: string): Promise<{ takenAt: Date }> {
  await Deno.writeFile(to, new Uint8Array(), { createNew: true, mode: 0o600 });
  const db = new sqlite.DatabaseSync(from);
  try {
    db.exec("PRAGMA busy_timeout = 10000");
    const takenAt = new Date();
    db.exec(`VACUUM INTO ${quoted(to)}`);
    return { takenAt };
  } catch (e) {
    await Deno.remove(to).catch(() => {});
    throw e;
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
