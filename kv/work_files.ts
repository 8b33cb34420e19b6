/**
 * Work files beside a backup or export while it is made (the file as it is written, the store's
 * copy an export reads): hidden, named for their process, and removed by whoever finds them left
 * by a process that is gone, since each may hold a whole copy of the store.
 */
import { exists } from "../core/files.ts";

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
 * Removes the work files in `folder` whose process is gone (killed mid-backup or mid-export):
 * each can hold a whole copy of the store. Where the system can't say whether a process runs
 * (no /proc), nothing is removed. Returns the names removed.
 */
export async function removeLeftovers(folder: string): Promise<string[]> {
  if (!await exists("/proc/self")) return [];
  const removed: string[] = [];
  try {
    for await (const entry of Deno.readDir(folder)) {
      const pid = WORK_FILE.exec(entry.name)?.[1];
      if (!entry.isFile || pid === undefined || await exists(`/proc/${pid}`)) continue;
      await Deno.remove(`${folder}/${entry.name}`).then(() => removed.push(entry.name), () => {});
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied)) throw e;
  }
  return removed;
}
