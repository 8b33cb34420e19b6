/**
 * How tests/walkthrough_test.ts reads the docs: the pages in the order the README links them,
 * their shell blocks, what to do with each, and the bash script that runs one page.
 */

export interface Page {
  path: string;
  blocks: string[];
}

/**
 * A block not run (`skip` says why; with `instead`, a script run in its place that leaves the
 * shell as the block would, on this machine), or run with the service stopped and started again
 * after. A rule matches exactly one block, or with `every`, one or more.
 */
export type Rule =
  & { page: string; skip?: string; instead?: string; stopped?: boolean; every?: boolean }
  & ({ has: string } | { is: string });

type Step =
  | { id: string; kind: "run" | "service" | "stopped"; text: string }
  | { id: string; kind: "skip"; why: string };

export interface PlannedPage {
  path: string;
  steps: Step[];
}

/** The ```sh blocks of a Markdown text. */
export function shellBlocks(text: string): string[] {
  return [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1].trimEnd());
}

/** The README, then each docs/ page in the order the README first links it. */
export async function pagesInReadingOrder(root: string): Promise<Page[]> {
  const readme = await Deno.readTextFile(`${root}/README.md`);
  const linked = [...readme.matchAll(/\]\((docs\/[^)#\s]+\.md)/g)].map((m) => m[1]);
  const paths = ["README.md", ...new Set(linked)];
  const pages = await Promise.all(paths.map(async (path) => ({
    path,
    blocks: shellBlocks(await Deno.readTextFile(`${root}/${path}`)),
  })));
  for await (const entry of Deno.readDir(`${root}/docs`)) {
    const path = `docs/${entry.name}`;
    if (!entry.name.endsWith(".md") || paths.includes(path)) continue;
    if (shellBlocks(await Deno.readTextFile(`${root}/${path}`)).length) {
      throw new Error(`${path} has commands but the README doesn't link it`);
    }
  }
  return pages;
}

export const blocksOf = (pages: Page[]) => pages.flatMap((p) => p.blocks);

/** A block that only starts the service, with or without settings before it. */
const STARTS_SERVICE = /^(?:[A-Z_]+=\S+ )*deno task start$/;

const matches = (rule: Rule, path: string, block: string) =>
  rule.page === path && ("is" in rule ? block === rule.is : block.includes(rule.has));

/** What to do with every block; throws on a rule that matches no block or more than one. */
export function planOf(pages: Page[], rules: Rule[]): PlannedPage[] {
  const used = new Map<Rule, number>(rules.map((r) => [r, 0]));
  const planned = pages.map((page) => ({
    path: page.path,
    steps: page.blocks.map((text, i): Step => {
      const id = `${page.path}#${i + 1}`;
      const rule = rules.find((r) => matches(r, page.path, text));
      if (rule) used.set(rule, used.get(rule)! + 1);
      if (rule?.skip && rule.instead !== undefined) {
        return {
          id,
          kind: "run",
          text: `echo ${quoted(`in its place: ${rule.skip}`)}\n${rule.instead}`,
        };
      }
      if (rule?.skip) return { id, kind: "skip", why: rule.skip };
      if (rule?.stopped) return { id, kind: "stopped", text };
      return { id, kind: STARTS_SERVICE.test(text) ? "service" : "run", text };
    }),
  }));
  for (const [rule, count] of used) {
    if (rule.every ? count === 0 : count !== 1) {
      throw new Error(`rule for ${rule.page} matches ${count} blocks: ${JSON.stringify(rule)}`);
    }
  }
  return planned;
}

/**
 * Bash functions the page scripts share. The service runs in a session of its own, so stopping
 * it stops `deno task` and the Deno it started; its process group id is kept in $RUN between
 * pages.
 */
export const HELPERS = String.raw`
service_stop() {
  local group
  group=$(cat "$RUN/service.pgid" 2>/dev/null || true)
  if [ -z "$group" ]; then return 0; fi
  kill -TERM -- "-$group" 2>/dev/null || true
  for _ in $(seq 1 300); do kill -0 -- "-$group" 2>/dev/null || break; sleep 0.1; done
  : > "$RUN/service.pgid"
}
service_start() {
  service_stop
  printf '%s\n' "$1" > "$RUN/service.cmd"
  ( setsid bash -c "$1" >> "$RUN/service.log" 2>&1 < /dev/null & echo $! > "$RUN/service.pgid" )
  for _ in $(seq 1 600); do
    if curl -sf -o /dev/null "http://localhost:${"$"}{PORT:-8080}/up"; then return 0; fi
    sleep 0.1
  done
  echo "@@failed $BLOCK: the service did not answer GET /up within 60 s"
}
service_restart() { service_start "$(cat "$RUN/service.cmd")"; }
page_end() {
  for pattern in "$@"; do
    for _ in $(seq 1 200); do
      if grep -Eq -- "$pattern" "$LOG"; then break; fi
      sleep 0.1
    done
  done
  for job in $(jobs -p); do kill "$job" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
`;

const quoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** One page as a bash script: its blocks in order, each announced, every failure reported. */
export function scriptOf(page: PlannedPage, opts: { prints: string[]; first: boolean }): string {
  const lines = [HELPERS];
  lines.push(`printf '%s' ${quoted(HELPERS)} > "$RUN/helpers.sh"`);
  if (!opts.first) lines.push(`. "$RUN/readme.env"`);
  lines.push(`set -E`, `trap 'echo "@@failed $BLOCK: $BASH_COMMAND (exit $?)"' ERR`);
  for (const step of page.steps) {
    lines.push(`BLOCK=${quoted(step.id)}; echo "@@block $BLOCK"`);
    if (step.kind === "skip") lines.push(`echo ${quoted(`skipped: ${step.why}`)}`);
    else if (step.kind === "service") lines.push(`service_start ${quoted(step.text)}`);
    else if (step.kind === "stopped") lines.push("service_stop", step.text, "service_restart");
    else lines.push(step.text);
  }
  lines.push(`trap - ERR`, `page_end ${opts.prints.map(quoted).join(" ")}`);
  if (opts.first) {
    // What the README leaves in the shell, for the pages that say "with `$TOKEN` set".
    lines.push(
      `export -p | grep -vE '^declare -x (LOG|RUN|PATH|HOME|PWD|OLDPWD|SHLVL)=' > "$RUN/readme.env"`,
    );
  }
  return lines.join("\n") + "\n";
}
