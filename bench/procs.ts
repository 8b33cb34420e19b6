/** Servers under test and baselines, each in its own Deno subprocess on loopback. */

const BENCH_DIR = new URL(".", import.meta.url).pathname;
const ROOT = new URL("..", import.meta.url).pathname;

/** A loopback port nobody is listening on right now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

export interface Proc {
  url: string;
  /** CPU time the process has used so far, all its threads: user + system. */
  cpuMs(): number;
  /** Its resident memory now, in MB. */
  rssMb(): number;
  stop(): Promise<void>;
}

/** Linux's clock tick; /proc/<pid>/stat counts CPU time in them. */
const TICK_MS = 10;

/**
 * CPU time of a process from /proc (utime + stime); NaN where there is no /proc. Read through
 * `cat`: Deno lets only --allow-all read /proc, and the bench runs with narrower permissions.
 */
function cpuMsOf(pid: number): number {
  try {
    const out = new Deno.Command("cat", { args: [`/proc/${pid}/stat`], stderr: "null" })
      .outputSync();
    if (!out.success) return NaN;
    const stat = new TextDecoder().decode(out.stdout);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return NaN;
  }
}

/** Resident memory of a process from /proc (VmRSS), in MB; NaN where there is no /proc. */
function rssMbOf(pid: number): number {
  try {
    const out = new Deno.Command("cat", { args: [`/proc/${pid}/status`], stderr: "null" })
      .outputSync();
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(new TextDecoder().decode(out.stdout))?.[1];
    return kb ? Number(kb) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

async function waitUntilUp(url: string, child: Deno.ChildProcess, stderr: () => string) {
  let exited = false;
  child.status.then(() => exited = true);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${url} exited before it answered:\n${stderr()}`);
    try {
      await (await fetch(url)).body?.cancel();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`${url} did not answer within 20 s:\n${stderr()}`);
}

async function spawn(args: string[], env: Record<string, string>, probe: string): Promise<Proc> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env,
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let errors = "";
  const decoder = new TextDecoder();
  const drained = child.stderr.pipeTo(
    new WritableStream({ write: (b) => void (errors = (errors + decoder.decode(b)).slice(-4000)) }),
  );
  try {
    await waitUntilUp(probe, child, () => errors);
  } catch (e) {
    child.kill("SIGKILL");
    await child.status;
    throw e;
  }
  return {
    url: probe.replace(/\/[^/]*$/, ""),
    cpuMs: () => cpuMsOf(child.pid),
    rssMb: () => rssMbOf(child.pid),
    async stop() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await child.status;
      clearTimeout(timer);
      await drained.catch(() => {});
    },
  };
}

/** The service, started by main.ts as deployed, with `env` as its environment. */
export async function startService(env: Record<string, string>): Promise<Proc> {
  const port = env.PORT;
  return await spawn(
    ["run", "-A", `${BENCH_DIR}loopback_main.ts`],
    { ...env, BASE_URL: `http://127.0.0.1:${port}` },
    `http://127.0.0.1:${port}/up`,
  );
}

/** A bare baseline server from bench/baselines, given a port and its KV file. */
export async function startBaseline(name: string, args: string[]): Promise<Proc> {
  const port = freePort();
  return await spawn(
    [
      "run",
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-write",
      `${BENCH_DIR}baselines/${name}.ts`,
      String(port),
      ...args,
    ],
    {},
    `http://127.0.0.1:${port}/up`,
  );
}

/** Runs a baseline to completion and returns what it printed on stdout (JSON). */
export async function runBaseline<T>(name: string, args: string[]): Promise<T> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-write",
      `${BENCH_DIR}baselines/${name}.ts`,
      ...args,
    ],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`baseline ${name} failed:\n${new TextDecoder().decode(out.stderr)}`);
  }
  return JSON.parse(new TextDecoder().decode(out.stdout));
}
