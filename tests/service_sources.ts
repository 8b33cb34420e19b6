/** The service's own modules, read for the tests that hold rules over all of them. */

const ROOT = new URL("../", import.meta.url);

/** The floors' directories (ARCHITECTURE.md); main.ts stands above them. */
export const FLOOR_DIRS = ["core", "kv", "domain", "delivery", "routes", "cli", "web"] as const;
export type FloorDir = typeof FLOOR_DIRS[number];

/** Every module of the service (the floors and main.ts), by repository-relative path, with its text. */
export async function serviceSources(): Promise<Map<string, string>> {
  const sources = new Map<string, string>();
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(new URL(dir, ROOT))) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) {
        sources.set(path, await Deno.readTextFile(new URL(path, ROOT)));
      }
    }
  };
  for (const dir of FLOOR_DIRS) await walk(dir);
  sources.set("main.ts", await Deno.readTextFile(new URL("main.ts", ROOT)));
  return sources;
}
