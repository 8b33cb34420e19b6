import { z } from "zod";
import type { LogFormat, LogLevel } from "./log.ts";

const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
/** A number setting, each of whose failures says what it must be, not what zod expected. */
const number = (what: string) => z.coerce.number({ error: `must be ${what}` });
const positiveInt = number("a whole number above 0").int("must be a whole number above 0")
  .positive("must be a whole number above 0");
const durationPattern = /^(\d+)(ms|s|m|h|d)$/;
const unitMs = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

function isBase64Of32Bytes(value: string): boolean {
  try {
    return Uint8Array.fromBase64(value).length === 32;
  } catch {
    return false;
  }
}

/** Parses "10s,1m,5m" into milliseconds. */
export function parseDurations(list: string): number[] {
  return list.split(",").map((part) => {
    const match = durationPattern.exec(part.trim());
    if (!match) throw new Error(`"${part}" is not a duration like 10s, 5m or 2h`);
    return Number(match[1]) * unitMs[match[2] as keyof typeof unitMs];
  });
}

/** One duration like 10s, 5m or 2h, in milliseconds. */
const duration = (fallback: string) =>
  z.string().default(fallback).transform((v, ctx) => {
    try {
      const [ms, ...more] = parseDurations(v);
      if (more.length === 0 && ms > 0) return ms;
      ctx.addIssue({ code: "custom", message: "must be one duration above 0, like 30s, 5m or 2h" });
    } catch (e) {
      ctx.addIssue({ code: "custom", message: (e as Error).message });
    }
    return z.NEVER;
  });

const schema = z.object({
  PORT: number("a port number from 0 to 65535").int("must be a port number from 0 to 65535")
    .min(0, "must be a port number from 0 to 65535").max(
      65535,
      "must be a port number from 0 to 65535",
    )
    .default(8080),
  HOST: z.string().min(1).optional(),
  KV_PATH: z.string().min(1).optional(),
  BASE_URL: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional(),
  APP_KEY: z.string().refine(isBase64Of32Bytes, "must be base64 of exactly 32 bytes").optional(),
  INTEGRATIONS_ENABLED: bool.default(true),
  INTEGRATIONS_API_RATE_LIMIT: positiveInt.default(60),
  WEBHOOKS_DISABLE_AFTER: positiveInt.default(20),
  WEBHOOKS_MAX_ATTEMPTS: positiveInt.default(8),
  WEBHOOKS_BACKOFF: z.string().default("10s,1m,5m,30m,2h,6h,12h").transform((v, ctx) => {
    try {
      return parseDurations(v);
    } catch (e) {
      ctx.addIssue({ code: "custom", message: (e as Error).message });
      return z.NEVER;
    }
  }),
  SOCKET_MODE_LIFETIME: duration("2h"),
  SOCKET_MODE_BACKLOG: positiveInt.default(10_000),
  SOCKET_MODE_DEAF_AFTER: duration("5m"),
  WEBHOOKS_TIMEOUT: number("a number of seconds above 0").positive(
    "must be a number of seconds above 0",
  )
    .default(10),
  WEBHOOKS_ALLOW_PRIVATE_URLS: bool.default(false),
  WEBHOOKS_MAX_IN_MEMORY: positiveInt.default(1000),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  LOG_FORMAT: z.enum(["json", "pretty", "auto"]).default("auto"),
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  TRUST_PROXY: bool.default(false),
  DELIVERY_TIMERS: bool.optional(),
  SERVICE_IN_CONTAINER: bool.default(false),
  ADMIN_REMOTE: bool.default(true),
});

/** What each setting is now, as help shows it: its value, or its default; secrets only as set. */
export function settingsInEffect(env: Record<string, string | undefined>): string {
  const secret = new Set(["APP_KEY", "METRICS_TOKEN"]);
  return Object.keys(schema.shape).map((name) => {
    const value = env[name] || undefined;
    const shown = value === undefined ? "(not set: its default)" : secret.has(name) ? "set" : value;
    return `  ${name.padEnd(28)} ${shown}`;
  }).join("\n");
}

/** The service's settings, read once from the environment at start. */
export interface Settings {
  port: number;
  /** The address to listen on: loopback unless told otherwise (the Docker image says 0.0.0.0). */
  host: string;
  /** A file path, ":memory:", a KV Connect URL, or undefined for Deno Deploy's own KV. */
  kvPath: string | undefined;
  baseUrl: string;
  /** Whether BASE_URL was set, rather than made from PORT. */
  baseUrlSet: boolean;
  /** Set by the Docker image: localhost there is the container's own address, not the host's. */
  inContainer: boolean;
  /** base64 of 32 bytes; resolved by the caller (generated into the data folder when missing). */
  appKey: string | undefined;
  integrationsEnabled: boolean;
  rateLimit: number;
  log: { level: LogLevel; format: LogFormat | "auto" };
  /** The bearer token GET /metrics wants; without one, /metrics does not exist. */
  metricsToken: string | undefined;
  /** Take the client's address from the last hop of X-Forwarded-For (behind a proxy). */
  trustProxy: boolean;
  /** Whether the admin CLI may run commands here over HTTP (`ADMIN_URL`; routes/admin.ts). */
  adminRemote: boolean;
  /**
   * Whether background work runs on the process's own timers. False on Deno Deploy, where timers
   * run only while a request is served: there requests and the every-minute cron task drive it.
   */
  deliveryTimers: boolean;
  webhooks: {
    disableAfter: number;
    maxAttempts: number;
    backoffMs: number[];
    timeoutMs: number;
    allowPrivateUrls: boolean;
    /** Pending jobs a process holds in memory at once; the rest of a backlog waits in KV. */
    window: number;
  };
  /** Apps without a public URL (decisions.md, "Apps without a public URL: Socket Mode"). */
  socketMode: {
    /** How long a connection lives before `refresh_requested`. */
    lifetimeMs: number;
    /** Events an app's absence keeps waiting, at most; the oldest go first. */
    backlog: number;
    /** How long an app with events waiting may be away before its installer is told. */
    deafAfterMs: number;
  };
}

export class SettingsError extends Error {}

const onDeploy = () => Boolean(Deno.env.get("DENO_DEPLOYMENT_ID"));

/** A KV location on local disk: the data folder beside it can hold a generated APP_KEY. */
export const isFilePath = (p: string | undefined): p is string =>
  !!p && p !== ":memory:" && !/^https?:\/\//.test(p);

const refuse = (lines: string[]) => new SettingsError(`Invalid settings:\n  ${lines.join("\n  ")}`);

/**
 * Reads and validates the environment. A bad value throws a SettingsError naming the variable,
 * so the service refuses to start rather than run with a setting it misread.
 */
export function loadSettings(env: Record<string, string | undefined>): Settings {
  const present = Object.fromEntries(
    Object.entries(withKeyFile(env)).filter(([k, v]) =>
      k in schema.shape && v !== undefined && v !== ""
    ),
  );
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const name = (path: PropertyKey[]) =>
      path[0] === "APP_KEY" && env.APP_KEY_FILE ? `APP_KEY_FILE (${env.APP_KEY_FILE})` : path[0];
    throw refuse(parsed.error.issues.map((i) => `${String(name(i.path))}: ${i.message}`));
  }
  const s = parsed.data;
  const kvPath = s.KV_PATH ?? (onDeploy() ? undefined : "./data/kv.sqlite3");
  if (!s.APP_KEY && kvPath !== ":memory:" && !isFilePath(kvPath)) {
    throw refuse(["APP_KEY: required when KV_PATH is not a local file"]);
  }
  return {
    port: s.PORT,
    // Deno Deploy routes requests to the isolate itself; loopback would reach nobody there.
    host: s.HOST ?? (onDeploy() ? "0.0.0.0" : "127.0.0.1"),
    kvPath,
    baseUrl: (s.BASE_URL ?? `http://localhost:${s.PORT}`).replace(/\/+$/, ""),
    baseUrlSet: s.BASE_URL !== undefined,
    inContainer: s.SERVICE_IN_CONTAINER,
    appKey: s.APP_KEY,
    integrationsEnabled: s.INTEGRATIONS_ENABLED,
    rateLimit: s.INTEGRATIONS_API_RATE_LIMIT,
    log: { level: s.LOG_LEVEL, format: s.LOG_FORMAT },
    metricsToken: s.METRICS_TOKEN,
    trustProxy: s.TRUST_PROXY,
    adminRemote: s.ADMIN_REMOTE,
    deliveryTimers: s.DELIVERY_TIMERS ?? !onDeploy(),
    webhooks: {
      disableAfter: s.WEBHOOKS_DISABLE_AFTER,
      maxAttempts: s.WEBHOOKS_MAX_ATTEMPTS,
      backoffMs: s.WEBHOOKS_BACKOFF,
      timeoutMs: s.WEBHOOKS_TIMEOUT * 1000,
      allowPrivateUrls: s.WEBHOOKS_ALLOW_PRIVATE_URLS,
      window: s.WEBHOOKS_MAX_IN_MEMORY,
    },
    socketMode: {
      lifetimeMs: s.SOCKET_MODE_LIFETIME,
      backlog: s.SOCKET_MODE_BACKLOG,
      deafAfterMs: s.SOCKET_MODE_DEAF_AFTER,
    },
  };
}

/**
 * APP_KEY read from the file APP_KEY_FILE names (a Docker or Compose secret), the way official
 * images take secrets: the key never sits in the environment a `docker inspect` shows.
 */
function withKeyFile(env: Record<string, string | undefined>) {
  const file = env.APP_KEY_FILE;
  if (!file) return env;
  if (env.APP_KEY) throw refuse(["APP_KEY_FILE: set APP_KEY or APP_KEY_FILE, not both"]);
  try {
    return { ...env, APP_KEY: Deno.readTextFileSync(file).trim() };
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound
      ? "there is no such file"
      : e instanceof Deno.errors.PermissionDenied
      ? "permission denied: the service's user (uid 1993 in the Docker image) must be able to read it"
      : (e as Error).message;
    throw refuse([`APP_KEY_FILE: can't read ${file} (${why})`]);
  }
}
