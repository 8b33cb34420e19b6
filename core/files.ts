/** Whether anything is at `path` (a file, a folder); other errors than its absence are thrown. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/**
 * Makes an existing file readable and writable by its owner only (0600), as every file of the
 * store must be: it holds every message. False when it is looser and this process can't change
 * that (another user owns it).
 */
export async function keepPrivate(path: string): Promise<boolean> {
  let mode: number | null;
  try {
    mode = (await Deno.stat(path)).mode;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return true;
    throw e;
  }
  if (mode === null || (mode & 0o077) === 0) return true;
  try {
    await Deno.chmod(path, 0o600);
    return true;
  } catch {
    return false;
  }
}
