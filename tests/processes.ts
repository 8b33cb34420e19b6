/**
 * The service and the admin CLI as real processes on one KV file, as in production: a second
 * instance, a rolling deploy, the CLI while the server runs.
 */
import type { Ctx } from "../domain/context.ts";
import { createKeyring, generateAppKey } from "../core/keyring.ts";
import { loadSettings } from "../core/settings.ts";
import { wrapStore } from "../kv/store/open.ts";
import type { TestServer } from "./harness.ts";
import { sleep, waitUntil } from "./webhook_receivers.ts";

/** Where the kernel's ephemeral ports begin: below it, no outgoing connection takes a port. */
function ephemeralFloor(): number {
  try {
    return Number(Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").split(/\s+/)[0]);
  } catch {
    return 32_768;
  }
}

/** Ports this test process handed out: never handed out twice. */
const handedOut = new Set<number>();

/**
 * A free port for a server a test starts (in this process, a child, or again after a kill), that
 * no other test or process can take first: below the kernel's ephemeral range, so no outgoing
 * connection is given it (a port the kernel handed out, port 0, can be, while its server is down
 * or not yet up), and never one handed out before in this run.
 */
export function freePort(): number {
  const floor = Math.min(ephemeralFloor(), 32_768);
  for (let tries = 0; tries < 100; tries++) {
    const port = 10_000 + Math.floor(Math.random() * (floor - 10_000));
    if (handedOut.has(port)) continue;
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      handedOut.add(port);
      return port;
    } catch (e) {
      if (!(e instanceof Deno.errors.AddrInUse)) throw e;
    }
  }
  throw new Error("no free port below the ephemeral range");
}

/** A main.ts unchanged (this release's unless told), its listener pinned to loopback. */
const loopbackMain = (main = new URL("../main.ts", import.meta.url).href) => `
const serve = Deno.serve;
Deno.serve = (options, handler) => serve({ ...options, hostname: "127.0.0.1" }, handler);
await import(${JSON.stringify(main)});
`;

/** A child process whose stdout and stderr are gathered into one string as they come. */
export interface Watched {
  child: Deno.ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Settles once both of its streams ended. */
  drained: Promise<unknown>;
  /** SIGKILL, unless it exited already; settles once it exited and its output is in. */
  kill(): Promise<void>;
}

const EXAMPLE_RECEIVER = new URL("../examples/receiver.ts", import.meta.url).pathname;

/** How the README runs examples/receiver.ts. */
export const EXAMPLE_RECEIVER_ARGS = [
  "run",
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--unstable-kv",
  EXAMPLE_RECEIVER,
];

/**
 * examples/receiver.ts, the receiver the README shows, as its own process: listening on `port`,
 * verifying with `secret`, keeping the events it saw in a store in `dir`.
 */
export function startExampleReceiver(secret: string, port: number, dir: string): Watched {
  return watch(Deno.execPath(), EXAMPLE_RECEIVER_ARGS, {
    WEBHOOK_SECRET: secret,
    RECEIVER_PORT: String(port),
    SEEN_KV_PATH: `${dir}/seen.sqlite3`,
  });
}

/** Starts `command` with `env` (and NO_COLOR), gathering what it prints. */
export function watch(command: string, args: string[], env: Record<string, string>): Watched {
  const child = new Deno.Command(command, {
    args,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const decoder = new TextDecoder();
  const collect = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeTo(new WritableStream({ write: (b) => void (output += decoder.decode(b)) }));
  const drained = Promise.all([collect(child.stdout), collect(child.stderr)]);
  return {
    child,
    output: () => output,
    drained,
    async kill() {
      try {
        child.kill("SIGKILL");
      } catch {
        // It exited by itself.
      }
      await child.status;
      await drained;
    },
  };
}

/** The service's entry point as `deno` arguments: this release's, or the main.ts at `main`. */
const serviceArgs = (main?: string) => [
  "eval",
  "--unstable-kv",
  "--unstable-cron",
  "--unstable-no-legacy-abort",
  loopbackMain(main),
];
const SERVICE_ARGS = serviceArgs();

/**
 * Runs the service with `env` until it exits by itself (a start-up check refusing), within
 * `timeoutMs`; its exit code and output. A service that starts serving instead is killed and
 * reported as code null.
 */
export async function runToExit(
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<{ code: number | null; output: string }> {
  const run = watch(Deno.execPath(), SERVICE_ARGS, { PORT: String(freePort()), ...env });
  // Once only: the interval must not fire again after the exit.
  const stop = () => {
    clearTimeout(timer);
    clearInterval(listening);
    void run.kill();
  };
  const timer = setTimeout(stop, timeoutMs);
  let served = false;
  const listening = setInterval(() => {
    if (run.output().includes("Listening on")) {
      served = true;
      stop();
    }
  }, 50);
  const status = await run.child.status;
  clearTimeout(timer);
  clearInterval(listening);
  await run.drained;
  return { code: served ? null : status.code, output: run.output() };
}

export interface Service {
  url: string;
  /** Everything the process printed so far. */
  output(): string;
  kill(): Promise<void>;
  /** Sends `signal` and waits for the exit code. */
  stop(signal: Deno.Signal): Promise<number>;
}

/**
 * Starts the service as its own process; resolves once it listens. `shell` runs it under
 * `bash -c` with that prefix (to set `ulimit`, say); `release`, the folder of another release
 * to run instead of this one (tests/rolling_deploy_test.ts); `port`, the one it listened on
 * before it was killed, for clients that come back to the same address.
 */
export async function startService(
  env: Record<string, string>,
  opts: { shell?: string; release?: string; port?: number } = {},
): Promise<Service> {
  const port = opts.port ?? freePort();
  const serviceEnv = { ...env, PORT: String(port) };
  // Another release runs from its own folder, with its own deno.json and lock.
  const shell = opts.release ? `cd '${opts.release}'` : opts.shell;
  const args = opts.release ? serviceArgs(`file://${opts.release}/main.ts`) : SERVICE_ARGS;
  const run = shell
    ? watch("bash", ["-c", `${shell}; exec "$@"`, "service", Deno.execPath(), ...args], serviceEnv)
    : watch(Deno.execPath(), args, serviceEnv);
  const exited = run.child.status.then(() => true);
  await waitUntil(
    async () => {
      if (await Promise.race([exited, sleep(0).then(() => false)])) {
        throw new Error(`the service exited:\n${run.output()}`);
      }
      return run.output().includes("Listening on");
    },
    20_000,
    "the service to listen",
  );
  return {
    url: `http://127.0.0.1:${port}`,
    output: run.output,
    kill: run.kill,
    async stop(signal) {
      run.child.kill(signal);
      const { code } = await run.child.status;
      await run.drained;
      return code;
    },
  };
}

/** A temp KV file, the services' environment, and a context on the same file for seeding. */
export async function sharedStore(extra: Record<string, string> = {}) {
  const dir = await Deno.makeTempDir({ prefix: "shared-store-" });
  const env = {
    KV_PATH: `${dir}/kv.sqlite3`,
    APP_KEY: generateAppKey(),
    INTEGRATIONS_API_RATE_LIMIT: "100000",
    WEBHOOKS_ALLOW_PRIVATE_URLS: "true",
    WEBHOOKS_BACKOFF: "100ms,200ms",
    // Short, so the lease a killed process held (timeout + 15 s) runs out soon.
    WEBHOOKS_TIMEOUT: "1",
    ...extra,
  };
  const settings = loadSettings(env);
  // Wrapped as openStore wraps it: this process is one more writer on the file, like the CLI.
  const kv = wrapStore(await Deno.openKv(env.KV_PATH), env.KV_PATH);
  const ctx: Ctx = { kv, settings, keyring: await createKeyring(env.APP_KEY) };
  return {
    env,
    ctx,
    /** A TestServer view of a running service, for `api()`. */
    as: (service: Service): TestServer => ({ ctx, url: service.url, close: async () => {} }),
    async cleanup() {
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Runs `deno task admin ...` as an operator would, on the store of `env`: what it printed. */
export async function cliRun(env: Record<string, string>, ...args: string[]) {
  const root = new URL("..", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    cwd: root,
    env: { ...env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** `cliRun` that must succeed: its JSON output. */
export async function cli(env: Record<string, string>, ...args: string[]) {
  const out = await cliRun(env, ...args);
  if (out.code !== 0) throw new Error(`admin ${args[0]} failed: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

/** The example Bolt app (examples/bolt_app.ts) as its own process, as docs/apps.md runs it. */
export function startBoltExample(env: Record<string, string>): Watched {
  return watch(Deno.execPath(), [
    "run",
    `--lock=${new URL("./deno.lock", import.meta.url).pathname}`,
    "--frozen",
    "--allow-net",
    "--allow-env",
    "--allow-sys=osRelease",
    new URL("../examples/bolt_app.ts", import.meta.url).pathname,
  ], env);
}

/** A release kept as tests/fixtures/<name>/release.tar.gz, unpacked into a folder of its own. */
export async function unpackRelease(name: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: `release-${name}-` });
  const tarball = new URL(`./fixtures/${name}/release.tar.gz`, import.meta.url).pathname;
  const tar = new Deno.Command("tar", { args: ["-xzf", tarball, "-C", dir] });
  if (!(await tar.output()).success) throw new Error(`can't unpack release ${name}`);
  return dir;
}

/** Runs the admin CLI of a release unpacked in `release` (its own deno.json and lock). */
export async function releaseCliRun(
  release: string,
  env: Record<string, string>,
  ...args: string[]
) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "cli/admin.ts", ...args],
    cwd: release,
    env: { ...env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}
