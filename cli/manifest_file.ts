import { invalid } from "../core/errors.ts";

/** A manifest file's text; a missing or unreadable one is one line naming `--manifest`. */
export async function readManifestFile(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound
      ? "there is no such file"
      : e instanceof Deno.errors.PermissionDenied
      ? "it can't be read (permission denied)"
      : "it can't be read";
    throw invalid("manifest", `--manifest: ${path}: ${why}.`);
  }
}
