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

function write(level: LogLevel, msg: string, fields: LogFields = {}) {
  if (RANK[level] < RANK[minimum]) return;
  const line = format === "json"
    ? JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })
    : pretty(level, msg, fields);
  if (RANK[level] >= RANK.warn) console.error(line);
  else console.log(line);
}

export const log = {
  debug: (msg: string, fields?: LogFields) => write("debug", msg, fields),
  info: (msg: string, fields?: LogFields) => write("info", msg, fields),
  warn: (msg: string, fields?: LogFields) => write("warn", msg, fields),
  error: (msg: string, fields?: LogFields) => write("error", msg, fields),
};
