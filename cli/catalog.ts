/**
 * `deno task catalog`: writes the event catalog where it is published beside the service, from
 * domain/webhooks/event_schemas.ts: openapi.yaml's message and event schemas, and docs/webhooks.md's
 * list of event types. `--check` changes nothing and fails when either is out of date (CI's
 * tests/event_catalog_test.ts does the same).
 */
import { stringify } from "yaml";
import { answerHelp } from "../core/task_help.ts";
import { catalogComponents, describeType, eventCatalog } from "../domain/webhooks/catalog.ts";

const OPENAPI_BEGIN =
  "    # Generated from domain/webhooks/event_schemas.ts by `deno task catalog`: edit there.";
const OPENAPI_END = "    # End of the generated schemas.";
const DOCS_BEGIN = "<!-- event types: written by `deno task catalog` -->";
const DOCS_END = "<!-- end of event types -->";

/** `text` with what lies between `begin` and `end` (both whole lines) replaced by `inner`. */
function between(text: string, { begin, end }: { begin: string; end: string }, inner: string) {
  const from = text.indexOf(`${begin}\n`);
  const to = text.indexOf(`${end}\n`, from);
  if (from < 0 || to < 0) throw new Error(`The markers "${begin}" and "${end}" are missing.`);
  return text.slice(0, from + begin.length + 1) + inner + text.slice(to);
}

/** openapi.yaml with its generated schemas as the catalog makes them now. */
export function openapiWithCatalog(text: string): string {
  const yaml = stringify(catalogComponents(), { lineWidth: 96, indent: 2 });
  const indented = yaml.trimEnd().split("\n").map((l) => `    ${l}`).join("\n");
  return between(text, { begin: OPENAPI_BEGIN, end: OPENAPI_END }, `${indented}\n`);
}

/** docs/webhooks.md with its list of event types as the catalog makes it now. */
export function docsWithCatalog(text: string): string {
  const items = eventCatalog().map((e) =>
    `- \`${e.type}\` (since ${e.added_in}): ${describeType(e.type)}`
  );
  return between(text, { begin: DOCS_BEGIN, end: DOCS_END }, `\n${items.join("\n")}\n\n`);
}

/** Markdown is compared as `deno fmt` leaves it: its lines wrapped at 100 columns. */
export const sameProse = (a: string, b: string) =>
  a.replace(/\s+/g, " ") === b.replace(/\s+/g, " ");

const FILES = [
  { path: "openapi.yaml", render: openapiWithCatalog, same: (a: string, b: string) => a === b },
  { path: "docs/webhooks.md", render: docsWithCatalog, same: sameProse },
];

if (import.meta.main) {
  answerHelp(
    Deno.args,
    `Usage: deno task catalog [--check]
Writes the event catalog from domain/webhooks/event_schemas.ts into openapi.yaml and
docs/webhooks.md. --check changes nothing and fails when either is out of date.`,
  );
  const root = new URL("..", import.meta.url);
  const check = Deno.args.includes("--check");
  let stale = 0;
  for (const { path, render, same } of FILES) {
    const url = new URL(path, root);
    const now = await Deno.readTextFile(url);
    const next = render(now);
    if (same(next, now)) continue;
    stale++;
    console.log(check ? `${path} is out of date: run deno task catalog` : `wrote ${path}`);
    if (check) continue;
    await Deno.writeTextFile(url, next);
    await new Deno.Command(Deno.execPath(), { args: ["fmt", "-q", url.pathname] }).output();
  }
  if (check && stale) Deno.exit(1);
}
