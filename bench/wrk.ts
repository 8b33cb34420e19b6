/** Runs wrk, the one load tool of every HTTP measurement, and reads its report. */
import type { Measured } from "./report.ts";

const WRK = "wrk";

/** The same for every target and its baseline, so their figures compare. */
export const LOAD = { threads: 2, connections: 32, seconds: 5, warmupSeconds: 1 } as const;

export interface WrkResult extends Measured {
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  socketErrors: number;
}

export interface WrkTarget {
  url: string;
  headers?: Record<string, string>;
  /** A Lua script file, for POST bodies that differ per request. */
  script?: string;
}

/** Exits with the install hint when wrk is missing: every scenario needs it. */
export async function requireWrk(): Promise<void> {
  try {
    await new Deno.Command(WRK, { args: ["--version"], stdout: "null", stderr: "null" }).output();
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    console.error("wrk is not installed: the benchmarks need it (apt-get install wrk).");
    Deno.exit(2);
  }
}

/** Runs wrk against `target` for `seconds`; its text report. */
export async function wrk(
  target: WrkTarget,
  seconds: number,
  load: { threads: number; connections: number } = LOAD,
): Promise<string> {
  const args = [
    `-t${load.threads}`,
    `-c${load.connections}`,
    `-d${seconds}s`,
    "--latency",
    "--timeout",
    "10s",
  ];
  for (const [name, value] of Object.entries(target.headers ?? {})) {
    args.push("-H", `${name}: ${value}`);
  }
  if (target.script) args.push("-s", target.script);
  args.push(target.url);
  const out = await new Deno.Command(WRK, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`wrk failed on ${target.url}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function latencyMs(report: string, percentile: string): number {
  const m = new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m").exec(report);
  return m ? Number(m[1]) * UNIT_MS[m[2]] : NaN;
}

/** Reads wrk's text report; a report without Requests/sec means the run broke. */
export function parseWrk(report: string): WrkResult {
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(report);
  const total = /^\s*(\d+) requests in/m.exec(report);
  if (!rps || !total) throw new Error(`unreadable wrk report:\n${report}`);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(report);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
    report,
  );
  return {
    rate: Number(rps[1]),
    cpuUs: NaN,
    p50Ms: latencyMs(report, "50"),
    p99Ms: latencyMs(report, "99"),
    requests: Number(total[1]),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    socketErrors: socket ? socket.slice(1).reduce((n, v) => n + Number(v), 0) : 0,
  };
}

/**
 * Warms the target up briefly, then measures it. A run where most answers failed is an error:
 * a rate of 404s would look like a fast service.
 */
export async function measure(
  target: WrkTarget,
  opts: {
    server?: { cpuMs(): number };
    onStart?: () => void;
    /** Threads and connections, when not LOAD's. */
    load?: { threads: number; connections: number };
  } = {},
): Promise<WrkResult> {
  await wrk(target, LOAD.warmupSeconds, opts.load);
  opts.onStart?.();
  const cpuBefore = opts.server?.cpuMs() ?? NaN;
  const result = parseWrk(await wrk(target, LOAD.seconds, opts.load));
  result.cpuUs = ((opts.server?.cpuMs() ?? NaN) - cpuBefore) * 1000 / result.requests;
  if (result.non2xx > result.requests * 0.01) {
    throw new Error(`${target.url}: ${result.non2xx} of ${result.requests} answers were not 2xx`);
  }
  return result;
}

/**
 * A Lua script for wrk that POSTs a JSON body built per request by `bodyLua` (a Lua expression
 * that may use `n`, a per-thread counter, `tid`, the thread's number, and `run`, a random number
 * drawn once per thread and run), so every request differs, from one run to the next too.
 */
export function postScript(path: string, headers: Record<string, string>, bodyLua: string) {
  const headerLines = Object.entries(headers)
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join("\n");
  return `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
${headerLines}
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function init(args)
  math.randomseed(os.time() * 1000 + tid)
  run = math.random(0, 0x7fffffff)
end
n = 0
function request()
  n = n + 1
  return wrk.format(nil, ${JSON.stringify(path)}, nil, ${bodyLua})
end
`;
}

/** Writes a script into `dir` and returns its path. */
export async function writeScript(dir: string, name: string, lua: string): Promise<string> {
  const path = `${dir}/${name}.lua`;
  await Deno.writeTextFile(path, lua);
  return path;
}
