/**
 * `deno task dev`: the service as a child process, started again when a source file changes.
 * Not `deno run --watch`: there the watcher and the program share one process, so a SIGTERM sent
 * to stop both reached the program alone (the watcher then waited for a change), and the
 * watcher's own SIGTERM before a restart could not be told from it. Here SIGTERM and SIGINT stop
 * the service gracefully and then this process, with the service's exit code.
 */
import { answerHelp } from "../core/task_help.ts";

answerHelp(
  Deno.args,
  `Usage: deno task dev
Runs the service (as deno task start does, with the same settings) and starts it again when a
source file changes. Ctrl-C or SIGTERM stops both. deno task start --help lists the settings.`,
);

const ROOT = new URL("..", import.meta.url).pathname;
const SERVICE = ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"];
/** What a change to restarts for: the service's sources and settings, not its data or tests. */
const SOURCE = /\.(ts|tsx|json|css)$/;
const IGNORED = /\/(data|tests|bench|docs|examples|node_modules|\.git)\//;
/** Changes this close together restart once: an editor's save touches several files. */
const SETTLE_MS = 200;

let stopping = false;
let restarting = false;
let child = start();

function start(): Deno.ChildProcess {
  const process = new Deno.Command(Deno.execPath(), { args: SERVICE, cwd: ROOT }).spawn();
  process.status.then(({ code }) => {
    if (!stopping && !restarting) {
      console.error(`dev: the service stopped (exit ${code}); it starts again on a change`);
    }
  });
  return process;
}

async function stopChild(): Promise<number> {
  try {
    child.kill("SIGTERM");
  } catch {
    // It had ended already.
  }
  return (await child.status).code;
}

async function restart(): Promise<void> {
  console.error("dev: a source file changed; restarting");
  restarting = true;
  await stopChild();
  restarting = false;
  if (!stopping) child = start();
}

const watcher = Deno.watchFs(ROOT, { recursive: true });
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, async () => {
    if (stopping) Deno.exit(1);
    stopping = true;
    watcher.close();
    Deno.exit(await stopChild());
  });
}

let pending: ReturnType<typeof setTimeout> | undefined;
let restarts = Promise.resolve();
for await (const change of watcher) {
  if (!change.paths.some((p) => SOURCE.test(p) && !IGNORED.test(p))) continue;
  clearTimeout(pending);
  pending = setTimeout(() => restarts = restarts.then(restart), SETTLE_MS);
}
