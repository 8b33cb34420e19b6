/**
 * The process's one logger: one line per event, JSON (for log collectors) or readable (for a
 * person at a terminal). Fields are what the caller passes, never a request's headers, body or
 * raw path: credentials travel there.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFormat = "json" | "pretty";
export type LogFields = Record<string, unknown>;

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

let minimum: LogLevel = "info";
let format: LogFormat = Deno.stdout.isTerminal() ? "pretty" : "json";

/** Sets the level and format (LOG_LEVEL, LOG_FORMAT); `auto` picks by whether stdout is a terminal. */
export function configureLog(opts: { level: LogLevel; format: LogFormat | "auto" }): void {
  minimum = opts.level;
  format = opts.format === "auto" ? (Deno.stdout.isTerminal() ? "pretty" : "json") : opts.format;
}

/** An error as log fields: its message and stack, never its `cause` chain's payloads. */
export const errorFields = (e: unknown): LogFields =>
  e instanceof Error ? { error: e.message, stack: e.stack } : { error: String(e) };

function pretty(level: LogLevel, msg: string, fields: LogFields): string {
  const time = new Date().toISOString().slice(11, 23);
  const { stack, ...rest } = fields;
  const pairs = Object.entries(rest)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  const line = `${time} ${level.toUpperCase().padEnd(5)} ${msg}${pairs.length ? "  " : ""}${
    pairs.join(" ")
  }`;
  return stack ? `${line}\n${stack}` : line;
}

const encoder = new TextEncoder();
/** Lines waiting to be written to stdout, and when they will be. */
let pending: string[] = [];
let pendingChars = 0;
let flushTimer: ReturnType<typeof setTimeout> | undefined;
const FLUSH_AFTER_MS = 20;
const FLUSH_AT_CHARS = 64_000;

/**
 * Writes the lines waiting for stdout now. Request lines are batched (one write per few
 * milliseconds instead of one per request, which would cost a busy service a tenth of its
 * throughput); warnings, errors and an exit flush them first, so nothing is lost or reordered.
 */
export function flushLog(): void {
  clearTimeout(flushTimer);
  flushTimer = undefined;
  if (pending.length === 0) return;
  let bytes = encoder.encode(pending.join("\n") + "\n");
  pending = [];
  pendingChars = 0;
  while (bytes.length > 0) bytes = bytes.subarray(Deno.stdout.writeSync(bytes));
}

// A process that ends by running out of work (the CLI) writes what is left.
globalThis.addEventListener("unload", flushLog);

function write(level: LogLevel, msg: string, fields: LogFields = {}) {
  if (RANK[level] < RANK[minimum]) return;
  const line = format === "json"
    ? JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })
    : pretty(level, msg, fields);
  if (RANK[level] >= RANK.warn) {
    flushLog();
    console.error(line);
    return;
  }
  pending.push(line);
  pendingChars += line.length;
  if (pendingChars >= FLUSH_AT_CHARS) return flushLog();
  if (flushTimer === undefined) {
    const timer = setTimeout(flushLog, FLUSH_AFTER_MS);
    // A process with nothing else to do must not be kept alive by its log.
    Deno.unrefTimer(timer);
    flushTimer = timer;
  }
}

export const log = {
  debug: (msg: string, fields?: LogFields) => write("debug", msg, fields),
  info: (msg: string, fields?: LogFields) => write("info", msg, fields),
  warn: (msg: string, fields?: LogFields) => write("warn", msg, fields),
  error: (msg: string, fields?: LogFields) => write("error", msg, fields),
};
