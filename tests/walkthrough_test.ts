/**
 * Every shell block of the README and of the docs/ pages it links, in the order a newcomer reads
 * them, run as written on a fresh copy of the repository: one shell per page, the README's
 * variables carried into the pages after it (they say "with `$TOKEN` set, see the README"), the
 * service started and stopped where the text says, and each page's background processes stopped
 * when it ends. Every command must succeed, no answer may be an API error, what the page says
 * will print must print, and the copy's `git status` must be empty afterwards.
 */
import assert from "node:assert/strict";
import { freePort } from "./processes.ts";
import {
  blocksOf,
  type Page,
  pagesInReadingOrder,
  planOf,
  type Rule,
  scriptOf,
} from "./walkthrough_plan.ts";
import { slackSdks } from "./slack_sdks.ts";

const root = new URL("..", import.meta.url).pathname;

/** Deno 2.5 (Deno Deploy's) refuses `VACUUM INTO`: backups and exports are the CLI's, on 2.9. */
const vacuumInto = Deno.version.deno.localeCompare("2.9.0", undefined, { numeric: true }) >= 0;
const NO_VACUUM = `Deno ${Deno.version.deno} refuses VACUUM INTO; backups and exports of a ` +
  "local file are the CLI's, on Deno 2.9 (docs/data.md)";

/**
 * Why the blocks that run the example Slack app are skipped where Slack's SDKs don't run
 * (tests/slack_sdks.ts): the service runs there, the example app does not.
 */
const NO_SLACK_SDKS = `Deno ${Deno.version.deno} can't run Slack's Bolt (it needs Node 22's ` +
  "APIs, which undici uses); the example Slack app runs on Deno 2.9";

/** Deno 2.5 resolves @types/node into a lock where 2.9 does not: a test run there changes it. */
const locksAlike = Deno.version.deno.localeCompare("2.9.0", undefined, { numeric: true }) >= 0;

/**
 * A second service standing in for the Deno Deploy app docs/deploy.md makes: its own store, which
 * the CLI is never pointed at, the `APP_KEY` the page made, no timers of its own, as on Deploy. It
 * stops when the page's script ends. Leaves `SERVICE` set, as the page's block does.
 */
function deployedStandIn(): string {
  const port = freePort();
  return String.raw`mkdir -p "$RUN/deployed"
( setsid env KV_PATH="$RUN/deployed/kv.sqlite3" PORT=${port} APP_KEY="$APP_KEY"   BASE_URL=http://localhost:${port} DELIVERY_TIMERS=false WEBHOOKS_ALLOW_PRIVATE_URLS=true   deno task start >> "$RUN/deployed.log" 2>&1 < /dev/null & echo $! > "$RUN/deployed.pgid" )
trap 'kill -TERM -- "-$(cat "$RUN/deployed.pgid")" 2>/dev/null || true' EXIT
until curl -sf -o /dev/null http://localhost:${port}/up; do sleep 0.1; done
SERVICE=http://localhost:${port}`;
}

/** Blocks not run, or run with the service stopped; each must match exactly one block. */
const RULES: Rule[] = [
  {
    page: "README.md",
    has: "npm install -g deno@",
    skip: "installs Deno for the whole machine; the blocks run on the Deno that runs this test",
  },
  { page: "README.md", is: "deno task test", skip: "the suite this test is part of" },
  ...(locksAlike ? [] : [{
    page: "README.md",
    has: "tests/smoke_test.ts",
    skip: `Deno ${Deno.version.deno} writes @types/node into tests/deno.lock, which 2.9 doesn't`,
  }]),
  { page: "README.md", has: "rm -rf ./data", stopped: true },
  {
    page: "docs/deploy.md",
    has: "docker ",
    every: true,
    skip: "run by tests/container_test.ts, in Podman",
  },
  {
    page: "docs/deploy.md",
    has: "deno deploy create",
    skip:
      "needs a Deno Deploy account: a service of its own on this machine stands in, as Deploy " +
      "runs it (no timers, its store out of the CLI's reach, the key made above)",
    instead: deployedStandIn(),
  },
  {
    page: "docs/deploy.md",
    has: "RECEIVER=https://",
    skip: "the stand-in reaches the receiver on this machine",
    instead: `RECEIVER=http://localhost:8000/`,
  },
  { page: "docs/data.md", has: "<your app's domain>", skip: "needs a Deno Deploy app" },
  { page: "docs/data.md", has: "admin backup", ...vacuumInto ? {} : { skip: NO_VACUUM } },
  {
    page: "docs/data.md",
    has: "admin restore",
    ...vacuumInto ? { stopped: true } : { skip: NO_VACUUM },
  },
  { page: "docs/data.md", has: "admin export", ...vacuumInto ? {} : { skip: NO_VACUUM } },
  ...(slackSdks ? [] : [
    { page: "docs/apps.md", has: "examples/bolt_app.ts", skip: NO_SLACK_SDKS },
    { page: "docs/apps.md", has: '"command": "/ship"', skip: NO_SLACK_SDKS },
    { page: "docs/apps.md", has: '"command": "/approve"', skip: NO_SLACK_SDKS },
    { page: "docs/apps.md", has: '"command": "/form"', skip: NO_SLACK_SDKS },
    { page: "docs/socket-mode.md", has: "examples/bolt_app.ts", skip: NO_SLACK_SDKS },
    { page: "docs/socket-mode.md", has: '"command": "/ship"', skip: NO_SLACK_SDKS },
    { page: "docs/socket-mode.md", has: "while you were away", skip: NO_SLACK_SDKS },
    { page: "docs/agents.md", has: "examples/agent_app.ts", skip: NO_SLACK_SDKS },
    { page: "docs/agents.md", has: "apps/$AGENT/threads", skip: NO_SLACK_SDKS },
  ]),
];

/** What each page says will print, as extended regular expressions (grep -E and JavaScript). */
const PRINTS: Record<string, string[]> = {
  "README.md": [
    "^message\\.created [0-9a-f-]{36} ", // the receiver verified a delivery
    "^event: message\\.created$", // the stream
  ],
  "docs/api.md": ["^event: message\\.created$"],
  "docs/webhooks.md": ["message\\.created [0-9a-f-]{36} → 2[0-9]{2}$"], // the forwarder, taken
  "docs/apps.md": [
    "^Open http://localhost:8001/",
    '"url": "http://localhost:[0-9]+/settings/login/',
    ...(slackSdks
      ? [
        '"status": "answered"', // a Bolt app's answer to /ship prod
        "^shipper: .*shipped prod", // its reply in the channel
        "^Approved by <@", // the message its button replaced
        String.raw`^\{"name":\["Please give your name\."\]\}$`, // the form's refusal, by block
      ]
      : []),
    String.raw`^\{"text":"Salad","count":1\}$`, // the poll, closed: the bot's vote moved
  ],
  "docs/socket-mode.md": slackSdks
    ? [
      '"status": "answered"', // the command, answered in the ack
      '"backlog": [1-9]', // the message's event, waiting while the app is away
    ]
    : [],
  "docs/agents.md": slackSdks
    ? [
      "^event: message\\.streaming$", // the reply, growing on the person's stream
      String.raw`channels were busy today`, // the stub model's answer, streamed whole
    ]
    : [],
  "docs/settings-screen.md": ['"url": "http://localhost:[0-9]+/settings/login/'],
  "docs/operating.md": ["^# HELP "],
  "docs/deploy.md": [
    "^[A-Za-z0-9+/]{43}=$", // the APP_KEY made
    "^message\\.created [0-9a-f-]{36} ", // the receiver verified the stand-in's delivery
  ],
};

/**
 * The service's port in the walkthroughs: one free now, never the default 8080, as for a newcomer
 * whose 8080 is taken. Every block must work with the `PORT` they start it with, through `$BASE`.
 */
const SERVICE_PORT = freePort();

/**
 * The ports the docs name (the example receiver's, the example OAuth app's, the example Slack
 * app's, the stub model's), each run on one free now instead: any of them may be taken on the machine that runs
 * the suite. What a newcomer reads names the usual ones.
 */
const PORTS = new Map([8000, 8001, 3000, 8700].map((port) => [port, freePort()]));

/** `text` with the docs' ports replaced where they name a port: an address, a setting, a default. */
const withPorts = (text: string) =>
  text.replace(
    /(localhost:|127\.0\.0\.1:|_PORT=|\?\? )(\d+)\b/g,
    (all, before, port) => PORTS.has(Number(port)) ? `${before}${PORTS.get(Number(port))}` : all,
  );

async function sh(cwd: string, script: string, env: Record<string, string> = {}) {
  const out = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { ok: out.success, text };
}

/** A copy of the working tree as a fresh clone has it, committed so `git status` can judge it. */
async function freshCopy(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "walkthrough-" });
  const copied = await sh(
    root,
    `tar --exclude=./.git --exclude=./data --exclude=./backups --exclude=./moved ` +
      `--exclude=./workspace.jsonl -cf - . | tar -C '${dir}' -xf -`,
  );
  assert.ok(copied.ok, copied.text);
  // The examples listen where the blocks expect them: on the ports taken for this run.
  for await (const entry of Deno.readDir(`${dir}/examples`)) {
    if (!/\.(ts|mjs|yaml)$/.test(entry.name)) continue;
    const file = `${dir}/examples/${entry.name}`;
    await Deno.writeTextFile(file, withPorts(await Deno.readTextFile(file)));
  }
  const committed = await sh(
    dir,
    "git init -q && git add -A && " +
      "git -c user.name=walkthrough -c user.email=walkthrough@invalid commit -qm clone",
  );
  assert.ok(committed.ok, committed.text);
  return dir;
}

/**
 * The environment of a newcomer's shell: none of the service's settings but one, this test's Deno.
 * A newcomer reads between commands; this test runs a page's in seconds, and the pages together
 * send one token more than its 60 requests in some minutes. What is tested is that each command
 * works as written, not the pace, so the per-token limit is raised for the services it starts.
 */
function newcomerEnv(run: string): Record<string, string> {
  const keep = ["HOME", "USER", "LANG", "TERM", "DENO_DIR", "TMPDIR"];
  const env: Record<string, string> = {
    NO_COLOR: "1",
    RUN: run,
    PORT: String(SERVICE_PORT),
    INTEGRATIONS_API_RATE_LIMIT: "600",
  };
  for (const name of keep) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  const denoDir = Deno.execPath().replace(/\/[^/]+$/, "");
  env.PATH = `${denoDir}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
  return env;
}

/** Runs one page's script in a session of its own, killed whole if it outlives `limitMs`. */
async function runPage(opts: {
  cwd: string;
  script: string;
  log: string;
  env: Record<string, string>;
  limitMs: number;
}): Promise<{ timedOut: boolean }> {
  // Everything the page starts writes into the one log, as it would into one terminal.
  const child = new Deno.Command("setsid", {
    args: ["bash", "-c", `exec > "$LOG" 2>&1\n${opts.script}`],
    cwd: opts.cwd,
    env: { ...opts.env, LOG: opts.log },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    new Deno.Command("kill", { args: ["-KILL", "--", `-${child.pid}`] }).outputSync();
  }, opts.limitMs);
  await child.status;
  clearTimeout(timer);
  return { timedOut };
}

/** The JSON objects in a line, where `curl -s` printed several with no newline between. */
function objectsIn(line: string): unknown[] {
  const found: unknown[] = [];
  let depth = 0, start = -1, inString = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = depth > 0;
    else if (ch === "{" && depth++ === 0) start = i;
    else if (ch === "}" && depth > 0 && --depth === 0) {
      try {
        found.push(JSON.parse(line.slice(start, i + 1)));
      } catch { /* not JSON: prose with braces */ }
    }
  }
  return found;
}

/** An API error's body: `{"message": …}`, perhaps with `errors`, and nothing else. */
const isApiError = (value: unknown): boolean =>
  typeof value === "object" && value !== null && "message" in value &&
  Object.keys(value).every((k) => k === "message" || k === "errors");

const apiErrors = (output: string) =>
  output.split("\n").flatMap(objectsIn).filter(isApiError).map((e) => JSON.stringify(e));

Deno.test({
  name: "walkthrough: every shell block of the README and docs/, in order, works on a fresh copy",
  // The service, the CLI and the examples run as processes of their own; their timers and pipes
  // end with them.
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const pages: Page[] = (await pagesInReadingOrder(root))
      .map((page) => ({ ...page, blocks: page.blocks.map(withPorts) }));
    const rules = RULES.map((r) => r.instead ? { ...r, instead: withPorts(r.instead) } : r);
    const plan = planOf(pages, rules);
    const copy = await freshCopy();
    const run = await Deno.makeTempDir({ prefix: "walkthrough-run-" });
    const env = newcomerEnv(run);
    const problems: string[] = [];
    try {
      for (const [index, page] of plan.entries()) {
        const log = `${run}/${index}.log`;
        const prints = (PRINTS[page.path] ?? []).map(withPorts);
        const script = scriptOf(page, { prints, first: index === 0 });
        const { timedOut } = await runPage({ cwd: copy, script, log, env, limitMs: 240_000 });
        const output = await Deno.readTextFile(log);
        if (timedOut) problems.push(`${page.path}: still running after 4 minutes\n${output}`);
        for (const line of output.split("\n").filter((l) => l.startsWith("@@failed"))) {
          problems.push(`${page.path}: ${line.slice(2)}`);
        }
        for (const line of apiErrors(output)) problems.push(`${page.path}: the API said ${line}`);
        for (const pattern of prints) {
          if (!new RegExp(pattern, "m").test(output)) {
            problems.push(`${page.path}: nothing printed matches /${pattern}/`);
          }
        }
        if (problems.length) {
          console.error(`--- ${page.path}\n${output}`);
          break;
        }
      }
    } finally {
      // The service, and docs/deploy.md's stand-in for a deployment if a page was cut short.
      await sh(
        copy,
        `. '${run}/helpers.sh' && service_stop; ` +
          `kill -TERM -- "-$(cat '${run}/deployed.pgid' 2>/dev/null)" 2>/dev/null || true`,
        env,
      );
    }
    const service = await Deno.readTextFile(`${run}/service.log`).catch(() => "");
    assert.deepEqual(problems, [], `the service's log:\n${service}`);

    const status = await sh(copy, "git status --porcelain --untracked-files=all");
    assert.equal(status.text, "", "the walkthroughs leave the tree as they found it");
    const lock = await sh(copy, "deno task test tests/lock_test.ts", env);
    assert.ok(lock.ok, `the tests still pass on the tree they leave:\n${lock.text}`);
    assert.ok(blocksOf(pages).length >= 30, "every page's blocks were found");
    await Deno.remove(copy, { recursive: true });
    await Deno.remove(run, { recursive: true });
  },
});
