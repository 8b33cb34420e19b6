/**
 * Work files beside a backup or export while it is made (the file as it is written, the store's
 * copy an export reads): hidden, named for their process, and removed by whoever finds them left
 * by a process that is gone, since each may hold a whole copy of the store.
 */
import { exists } from "../../core/files.ts";

/** What a work file beside a target is for: the target as it is written, or a store's copy. */
type WorkKind = "partial" | "copy";

/**
 * A hidden name beside `file` for a work file of this process: `file` while it is written, or a
 * copy of the store an export reads. It names the process, so that a later backup, export or
 * start can tell one left by a process that was killed (`removeLeftovers`).
 */
export function workName(file: string, kind: WorkKind = "partial"): string {
  const slash = file.lastIndexOf("/");
  const [folder, base] = slash < 0
    ? [".", file]
    : [file.slice(0, slash) || "/", file.slice(slash + 1)];
  return `${folder}/.${base}.${kind}-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
}

/** A hidden name beside `file` for it while it is written. */
export const partialName = (file: string): string => workName(file, "partial");

const WORK_FILE = /^\..+\.(?:partial|copy)-(\d+)-[0-9a-f]{8}(?:-wal|-shm|-journal)?$/;

/**
 * Whether this process can tell which processes run: Linux's /proc, which Deno opens only to a
 * process with every permission (the admin CLI; the service runs with fewer).
 */
async function seesProcesses(): Promise<boolean> {
  try {
    return await exists("/proc/self");
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      return false;
    }
    throw e;
  }
}

/**
 * Whether process `pid` of this host runs (a stopped one does; a zombie, killed and not yet
 * reaped, as a killed child whose parent died is in a container, does not); null where this
 * process can't tell. A work file's owner, or an import's.
 */
export async function processRuns(pid: number | string): Promise<boolean | null> {
  if (!await seesProcesses()) return null;
  let stat: string;
  try {
    stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
  // "pid (name) state ...": the name may hold anything, so the state follows its last ")".
  const state = stat.charAt(stat.lastIndexOf(")") + 2);
  return state !== "Z" && state !== "X";
}

/** Whether a work file's owner is still at work, asked of the file itself (kv/store/store_file.ts). */
export type InUse = (path: string) => boolean;

/**
 * Removes the work files in `folder` whose process is gone (killed mid-backup or mid-export):
 * each can hold a whole copy of the store. A process runs if /proc says so; where this process
 * can't read /proc, if one of its SQLite work files is held open (`inUse`: a copy being written
 * or read); else nothing is removed. Returns the names removed.
 */
export async function removeLeftovers(folder: string, inUse?: InUse): Promise<string[]> {
  const byPid = new Map<string, string[]>();
  try {
    for await (const entry of Deno.readDir(folder)) {
      const pid = WORK_FILE.exec(entry.name)?.[1];
      if (entry.isFile && pid !== undefined) byPid.set(pid, [...byPid.get(pid) ?? [], entry.name]);
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied) return [];
    throw e;
  }
  if (byPid.size === 0) return [];
  const proc = await seesProcesses();
  if (!proc && !inUse) return [];
  const removed: string[] = [];
  for (const [pid, names] of byPid) {
    const running = await processRuns(pid) ??
      names.some((n) => !/-(?:wal|shm|journal)$/.test(n) && inUse!(`${folder}/${n}`));
    if (running) continue;
    for (const name of names) {
      await Deno.remove(`${folder}/${name}`).then(() => removed.push(name), () => {});
    }
  }
  return removed;
}
