/**
 * The floors of the house (ARCHITECTURE.md): imports only run downward, and no module imports
 * itself back through others. Type-only imports count: a record shape is as much a dependency as
 * a function. The check reads the import statements of every module of the service.
 */
import assert from "node:assert/strict";
import ts from "npm:typescript@5.9.3";
import { type FloorDir, serviceSources } from "./service_sources.ts";

const ROOT = new URL("../", import.meta.url);

/** Each floor, and the floors it may import from (its own included). */
export const FLOORS: Record<string, readonly string[]> = {
  core: ["core"],
  kv: ["kv", "core"],
  domain: ["domain", "kv", "core"],
  delivery: ["delivery", "domain", "kv", "core"],
  routes: ["routes", "domain", "web", "core"],
  cli: ["cli", "domain", "core"],
  web: ["web", "core"],
} satisfies Record<FloorDir, readonly FloorDir[]>;

/**
 * Where start-up composition wires the floors together: main.ts may import anything, and the
 * CLI opens the store the way main.ts does. The service's version has one home, deno.json.
 */
const COMPOSITION: Record<string, readonly string[]> = {
  "main.ts": Object.keys(FLOORS),
  "cli/admin.ts": ["kv/store/open.ts", "delivery/apps/sender.ts"],
  "core/version.ts": ["deno.json"],
};

const IMPORT =
  /(?:import|export)\s[^"';]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g;

/** The repository-relative modules `source` (a module's text, at `path`) imports. */
export function importsOf(path: string, source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (spec.startsWith(".")) out.push(new URL(spec, `file:///${path}`).pathname.slice(1));
  }
  return out;
}

const floorOf = (path: string) => path.includes("/") ? path.split("/")[0] : path;

/** The imports in `graph` that run upward, or sideways into a floor not allowed, as lines. */
export function upwardImports(graph: Map<string, string[]>): string[] {
  const wrong: string[] = [];
  for (const [from, targets] of graph) {
    const allowed = FLOORS[floorOf(from)];
    const composed = COMPOSITION[from] ?? [];
    for (const to of targets) {
      if (composed.includes(to) || composed.includes(floorOf(to))) continue;
      if (!allowed?.includes(floorOf(to))) wrong.push(`${from} imports ${to}`);
    }
  }
  return wrong;
}

/** The groups of modules that import each other round in a circle (Tarjan's algorithm). */
export function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

async function serviceModules(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for (const [path, source] of await serviceSources()) graph.set(path, importsOf(path, source));
  return graph;
}

/** An assignment to a method of a Deno KV or of a commit: patching an object the runtime owns. */
const PATCH =
  /\b\w+\.(?:atomic|commit|close|get|getMany|list|set|delete|enqueue|listenQueue)\s*=(?![=>])/;
/** A registry that hangs state on a store or a commit, instead of the Store holding it. */
const WEAK_KEYED = /new\s+Weak(?:Map|Set)\s*<\s*(?:Deno\.Kv|Deno\.AtomicOperation|Store|Plan)\b/;
/** Where state about the store lives: the Store itself (kv/store/store.ts). */
const STORE_MODULE = "kv/store/store.ts";
/** A module longer than this holds more than one thing. */
const MAX_LINES = 300;

/** The lines of `sources` that patch a store or a commit, or key a registry by one. */
export function hiddenState(sources: Map<string, string>): string[] {
  const found: string[] = [];
  for (const [path, source] of sources) {
    if (path === STORE_MODULE) continue;
    source.split("\n").forEach((line, i) => {
      if (PATCH.test(line) || WEAK_KEYED.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

/** The modules of `sources` longer than MAX_LINES, with their length. */
export function longModules(sources: Map<string, string>): string[] {
  return [...sources]
    .map(([path, source]) => [path, source.split("\n").length - 1] as const)
    .filter(([, lines]) => lines > MAX_LINES)
    .map(([path, lines]) => `${path}: ${lines} lines`);
}

Deno.test("architecture: every import runs downward, and none runs in a circle", async () => {
  const graph = await serviceModules();
  assert.ok(graph.size > 100, `read ${graph.size} modules`);
  assert.deepEqual(upwardImports(graph), [], "imports that run upward (see ARCHITECTURE.md)");
  assert.deepEqual(circles(graph), [], "modules that import each other");
});

Deno.test("architecture: nothing patches the store or a commit, or hangs state on one", async () => {
  assert.deepEqual(
    hiddenState(await serviceSources()),
    [],
    "the Store (kv/store/store.ts) holds it",
  );
});

/** A function longer than this does more than one thing; one with more positional parameters than
 * this is called with its arguments in the wrong order sooner or later. */
const MAX_FUNCTION_LINES = 80;
const MAX_POSITIONAL = 4;
/** Entries at the top of domain/: past this, a flat folder stands in for a layout. */
const MAX_DOMAIN_ENTRIES = 25;

/** Every function of `sources` (declarations, methods, arrows, expressions) with its shape. */
export function functionShapes(sources: Map<string, string>) {
  const out: { where: string; lines: number; params: number }[] = [];
  for (const [path, source] of sources) {
    const kind = path.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
    const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true, kind);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
        const fn = node as ts.FunctionLikeDeclaration;
        const line = (pos: number) => file.getLineAndCharacterOfPosition(pos).line;
        const name = fn.name?.getText(file) ??
          (ts.isVariableDeclaration(fn.parent) ? fn.parent.name.getText(file) : "(anonymous)");
        out.push({
          where: `${path}:${line(fn.getStart(file)) + 1} ${name}`,
          lines: line(fn.getEnd()) - line(fn.getStart(file)) + 1,
          params: fn.parameters.length,
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return out;
}

Deno.test(`architecture: no function is longer than ${MAX_FUNCTION_LINES} lines or takes more than ${MAX_POSITIONAL} positional parameters`, async () => {
  const shapes = functionShapes(await serviceSources());
  assert.ok(shapes.length > 500, `read ${shapes.length} functions`);
  assert.deepEqual(
    shapes.filter((f) => f.lines > MAX_FUNCTION_LINES).map((f) => `${f.where}: ${f.lines} lines`),
    [],
    "split them into named steps",
  );
  assert.deepEqual(
    shapes.filter((f) => f.params > MAX_POSITIONAL).map((f) => `${f.where}: ${f.params}`),
    [],
    "name the parameters past four in an object",
  );
});

Deno.test("architecture: the checks of function shape catch a long function and a long signature", () => {
  const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  const x${i} = ${i};`);
  const shapes = functionShapes(
    new Map([
      ["kv/a.ts", `export function long() {\n${body.join("\n")}\n}\n`],
      ["kv/b.ts", "export const wide = (a: 1, b: 2, c: 3, d: 4, e: 5) => a;\n"],
      ["kv/c.ts", "export function named(a: 1, { b, c, d, e }: { b: 2; c: 3; d: 4; e: 5 }) {}\n"],
    ]),
  );
  assert.deepEqual(shapes.map((f) => [f.where, f.lines > MAX_FUNCTION_LINES, f.params]), [
    ["kv/a.ts:1 long", true, 0],
    ["kv/b.ts:1 wide", false, 5],
    ["kv/c.ts:1 named", false, 2],
  ]);
});

Deno.test(`architecture: domain/ is laid out by capability, at most ${MAX_DOMAIN_ENTRIES} entries at its top`, async () => {
  const entries = await Array.fromAsync(Deno.readDir(new URL("domain", ROOT)));
  const folders = entries.filter((e) => e.isDirectory).map((e) => e.name).sort();
  assert.ok(
    entries.length <= MAX_DOMAIN_ENTRIES,
    `${entries.length} entries: ${entries.map((e) => e.name).sort().join(", ")}`,
  );
  // Every capability ARCHITECTURE.md names is a folder, and every folder is named there.
  const drawn = await Deno.readTextFile(new URL("ARCHITECTURE.md", ROOT));
  const named = [...drawn.matchAll(/`domain\/([a-z_]+)\/`/g)].map((m) => m[1]);
  assert.deepEqual([...new Set(named)].sort(), folders);
  // A prefix shared by several files stands in for a folder.
  const files = entries.filter((e) => e.isFile).map((e) => e.name.split("_")[0]);
  const shared = files.filter((p, i) => files.indexOf(p) !== i);
  assert.deepEqual(shared, [], "files sharing a prefix belong in a folder");
});

/** Entries at the top of kv/: grouped by what they store, each group named in ARCHITECTURE.md. */
const MAX_KV_ENTRIES = 30;

Deno.test(`architecture: kv/ is grouped by what it stores, at most ${MAX_KV_ENTRIES} entries at its top`, async () => {
  const entries = await Array.fromAsync(Deno.readDir(new URL("kv", ROOT)));
  assert.ok(
    entries.length <= MAX_KV_ENTRIES,
    `${entries.length} entries: ${entries.map((e) => e.name).sort().join(", ")}`,
  );
  const folders = entries.filter((e) => e.isDirectory).map((e) => e.name).sort();
  const drawn = await Deno.readTextFile(new URL("ARCHITECTURE.md", ROOT));
  const named = [...drawn.matchAll(/`kv\/([a-z_]+)\/`/g)].map((m) => m[1]);
  assert.deepEqual([...new Set(named)].sort(), folders);
});

Deno.test(`architecture: no module is longer than ${MAX_LINES} lines`, async () => {
  assert.deepEqual(longModules(await serviceSources()), [], "split them by concern");
});

Deno.test("architecture: the checks catch a patched commit and a registry keyed by a store", () => {
  const sources = new Map([
    ["kv/a.ts", "  op.commit = () => commit();\n  kv.atomic = wrapped;\n"],
    ["kv/b.ts", "const kinds = new WeakMap<Deno.Kv, Kind>();\nconst x = a.get(k);\n"],
    ["domain/c.ts", "const seen = new WeakSet<Plan>();\nif (op.commit === c) return;\n"],
  ]);
  assert.deepEqual(hiddenState(sources), [
    "kv/a.ts:1: op.commit = () => commit();",
    "kv/a.ts:2: kv.atomic = wrapped;",
    "kv/b.ts:1: const kinds = new WeakMap<Deno.Kv, Kind>();",
    "domain/c.ts:1: const seen = new WeakSet<Plan>();",
  ]);
});

Deno.test("architecture: the check itself catches an upward import, a type-only one, a circle", () => {
  const graph = new Map([
    ["kv/a.ts", importsOf("kv/a.ts", 'import type { Rule } from "../domain/b.ts";\n')],
    ["domain/b.ts", importsOf("domain/b.ts", 'import {\n  a,\n} from "../kv/a.ts";\n')],
    ["web/c.tsx", importsOf("web/c.tsx", 'export { x } from "../core/d.ts";')],
    ["core/d.ts", []],
  ]);
  assert.deepEqual(upwardImports(graph), ["kv/a.ts imports domain/b.ts"]);
  assert.deepEqual(circles(graph), [["domain/b.ts", "kv/a.ts"]]);
});
