/**
 * DNS answers kept for their TTL. An attempt to a hostname URL would otherwise cost an A and an
 * AAAA lookup every time; the answers are still checked against the SSRF rules on every use
 * (core/url_safety.ts), so a cached answer is never trusted more than a fresh one.
 */
import { promises as dns } from "node:dns";
import { RecentMap } from "./recent_map.ts";

/** An address a name resolves to, and for how many seconds the answer may be kept. */
export interface DnsAnswer {
  address: string;
  ttl: number;
}

/** Looks a name's A and AAAA records up, with their TTLs. */
export type TtlLookup = (host: string) => Promise<DnsAnswer[]>;

/** Looks names up; tests substitute their own answers. */
export type Resolver = (host: string, signal?: AbortSignal) => Promise<string[]>;

/** However long a record says, an answer is looked up again after this. */
const MAX_TTL_S = 300;
const LOOKUP_TIMEOUT_MS = 5_000;

/**
 * The system's DNS through node:dns, the one lookup of the platform that reports TTLs
 * (Deno.resolveDns does not). A name with neither record answers empty.
 */
export const systemLookup: TtlLookup = async (host) => {
  const resolver = new dns.Resolver({ timeout: LOOKUP_TIMEOUT_MS, tries: 1 });
  const lookups = await Promise.allSettled([
    resolver.resolve4(host, { ttl: true }),
    resolver.resolve6(host, { ttl: true }),
  ]);
  return lookups.flatMap((r) => r.status === "fulfilled" ? r.value : []);
};

interface Kept {
  addresses: Promise<string[]>;
  /** Until when (ms) the answer may be used; Infinity while the lookup is under way. */
  until: number;
}

/**
 * A Resolver that keeps each name's answer for its shortest TTL (at most MAX_TTL_S), with one
 * lookup per name under way at a time. An empty answer or a failure is not kept. A caller's
 * signal ends its own wait, never the lookup others share.
 */
export function cachedResolver(
  lookup: TtlLookup,
  now: () => number = Date.now,
  max = 4_096,
): Resolver {
  const kept = new RecentMap<string, Kept>(max);
  const forget = (host: string, entry: Kept) => kept.get(host) === entry && kept.delete(host);
  const start = (host: string) => {
    const entry: Kept = { until: Infinity, addresses: Promise.resolve([]) };
    entry.addresses = lookup(host).then((answers) => {
      const ttl = Math.min(MAX_TTL_S, ...answers.map((a) => a.ttl));
      if (answers.length === 0 || ttl <= 0) forget(host, entry);
      else entry.until = now() + ttl * 1000;
      return answers.map((a) => a.address);
    }, (e) => {
      forget(host, entry);
      throw e;
    });
    kept.set(host, entry);
    return entry;
  };
  return (host, signal) => {
    const hit = kept.get(host);
    const entry = hit && hit.until > now() ? hit : start(host);
    return signal ? raceAbort(entry.addresses, signal) : entry.addresses;
  };
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** The system's DNS, answers kept for their TTL. */
export const systemResolver: Resolver = cachedResolver(systemLookup);
