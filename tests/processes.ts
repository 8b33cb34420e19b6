/**
 * The service and the admin CLI as real processes on one KV file, as in production: a second
 * instance, a rolling deploy, the CLI while the server runs.
 */
import type { Ctx } from "../core/context.ts";
import { createKeyring, generateAppKey } from "../core/keyring.ts";
import { loadSettings } from "../core/settings.ts";
import { retryLockedCommits } from "../kv/open.ts";
import { coalesceReads } from "../kv/read_coalescer.ts";
import type { TestServer } from "./harness.ts";
import { sleep, waitUntil } from "./webhook_receivers.ts";

export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** main.ts unchanged, its listener pinned to loopback (main.ts binds every interface). */
const LOOPBACK_MAIN = `
const serve = Deno.serve;
Deno.serve = (options, handler) => serve({ ...options, hostname: "127.0.0.1" }, handler);
await import(${JSON.stringify(new URL("../main.ts", import.meta.url).href)});
`;

/**
 * Runs the service with `env` until it exits by itself (a start-up check refusing), within
 * `timeoutMs`; its exit code and output. A service that starts serving instead is killed and
 * reported as code null.
 */
export async function runToExit(
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<{ code: number | null; output: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--unstable-kv", "--unstable-cron", "--unstable-no-legacy-abort", LOOPBACK_MAIN],
    env: { PORT: String(freePort()), NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const decoder = new TextDecoder();
  const collect = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeTo(new WritableStream({ write: (b) => void (output += decoder.decode(b)) }));
  const drained = Promise.all([collect(child.stdout), collect(child.stderr)]);
  // Once only, and never after the exit: a second kill of an exited child throws, uncaught.
  const kill = () => {
    clearTimeout(timer);
    clearInterval(watch);
    try {
      child.kill("SIGKILL");
    } catch {
      // It exited meanwhile.
    }
  };
  const timer = setTimeout(kill, timeoutMs);
  let served = false;
  const watch = setInterval(() => {
    if (output.includes("Listening on")) {
      served = true;
      kill();
    }
  }, 50);
  const status = await child.status;
  clearTimeout(timer);
  clearInterval(watch);
  await drained;
  return { code: served ? null : status.code, output };
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
 * `bash -c` with that prefix (to set `ulimit`, say).
 */
export async function startService(
  env: Record<string, string>,
  opts: { shell?: string } = {},
): Promise<Service> {
  const port = freePort();
  const deno = [
    Deno.execPath(),
    "eval",
    "--unstable-kv",
    "--unstable-cron",
    "--unstable-no-legacy-abort",
    LOOPBACK_MAIN,
  ];
  const command = opts.shell
    ? new Deno.Command("bash", {
      args: ["-c", `${opts.shell}; exec "$@"`, "service", ...deno],
      env: { ...env, PORT: String(port), NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    })
    : new Deno.Command(deno[0], {
      args: deno.slice(1),
      env: { ...env, PORT: String(port), NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    });
  const child = command.spawn();
  let output = "";
  const decoder = new TextDecoder();
  const collect = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeTo(new WritableStream({ write: (b) => void (output += decoder.decode(b)) }));
  const drained = Promise.all([collect(child.stdout), collect(child.stderr)]);
  const exited = child.status.then(() => true);
  await waitUntil(
    async () => {
      if (await Promise.race([exited, sleep(0).then(() => false)])) {
        throw new Error(`the service exited:\n${output}`);
      }
      return output.includes("Listening on");
    },
    20_000,
    "the service to listen",
  );
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    async kill() {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
      await child.status;
      await drained;
    },
    async stop(signal) {
      child.kill(signal);
      const { code } = await child.status;
      await drained;
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
  const kv = coalesceReads(retryLockedCommits(await Deno.openKv(env.KV_PATH)));
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

/** Runs `deno task admin ...` as an operator would, on the store of `env`; its JSON output. */
export async function cli(env: Record<string, string>, ...args: string[]) {
  const root = new URL("..", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    cwd: root,
    env: { ...env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) {
    throw new Error(`admin ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return JSON.parse(stdout);
}
