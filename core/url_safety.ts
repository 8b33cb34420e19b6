/**
 * Server-side request forgery guard: a webhook URL may only reach public addresses. The check
 * runs at creation and again before every attempt, and the attempt then connects to the very
 * address that was checked (core/outbound/connector.ts), so a DNS answer that changes in between
 * (rebinding) cannot redirect it.
 */
import { type Resolver, systemResolver } from "./dns.ts";

/** Why a URL may not be used; the message is safe to show (it names no secret). */
/** Named with the setting that lifts it: a developer testing on localhost meets this first. */
const NOT_PUBLIC =
  "The url must point to a public address (a server may allow private ones for local development with WEBHOOKS_ALLOW_PRIVATE_URLS=true).";

export class UnsafeUrlError extends Error {}

const BLOCKED_NAMES = new Set(["localhost", "metadata.google.internal"]);

/**
 * Cloud instance-metadata endpoints: they hand out the host's credentials, so no setting makes
 * them a webhook's target, WEBHOOKS_ALLOW_PRIVATE_URLS included.
 */
const METADATA_NAMES = new Set(["metadata.google.internal", "metadata.goog"]);
const METADATA_ADDRESSES = ["169.254.169.254", "fd00:ec2::254", "100.100.100.200", "169.254.170.2"];

/** [first address, prefix length] of the IPv4 ranges that are not publicly routable. */
const V4_BLOCKED: [string, number][] = [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata 169.254.169.254
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast 255.255.255.255
];

/** IPv6 ranges refused outright; ranges that embed an IPv4 address are judged by it instead. */
const V6_BLOCKED: [string, number][] = [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["100::", 64], // discard
  ["2001::", 32], // Teredo: tunnels to an address we cannot see
  ["64:ff9b:1::", 48], // local-use NAT64 (RFC 8215): only ever a local network's translator
  ["2001:db8::", 32], // documentation
  ["fc00::", 7], // unique-local, AWS metadata fd00:ec2::254
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
];

/** [prefix, prefix length, offset of the embedded IPv4 address]. */
const V6_EMBEDDING_V4: [string, number, number][] = [
  ["::ffff:0:0", 96, 12], // IPv4-mapped
  ["::ffff:0:0:0", 96, 12], // IPv4-translated (RFC 2765)
  ["::", 96, 12], // IPv4-compatible (deprecated)
  ["64:ff9b::", 96, 12], // NAT64
  ["2002::", 16, 2], // 6to4
];

/** The 4 bytes of a dotted-quad IPv4 address, or null. */
function parseV4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) {
    return null;
  }
  return Uint8Array.from(parts.map(Number));
}

/** The 16 bytes of an IPv6 address (`::` and a dotted IPv4 tail allowed), or null. */
function parseV6(text: string): Uint8Array | null {
  if (!text.includes(":") || text.includes("%")) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string): number[] | null => {
    if (half === "") return [];
    const out: number[] = [];
    const parts = half.split(":");
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if (i === parts.length - 1 && p.includes(".")) {
        const v4 = parseV4(p);
        if (!v4) return null;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (/^[0-9a-f]{1,4}$/i.test(p)) {
        out.push(parseInt(p, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...new Array(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return bytes;
}

/** An IP literal as bytes (4 or 16), brackets of a URL host allowed; null for a name. */
export function parseIp(text: string): Uint8Array | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  return parseV4(bare) ?? parseV6(bare);
}

function inRange(addr: Uint8Array, prefix: Uint8Array, bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const mask = 0x80 >> (i % 8);
    if ((addr[i >> 3] & mask) !== (prefix[i >> 3] & mask)) return false;
  }
  return true;
}

const compile = (ranges: [string, number][]) =>
  ranges.map(([text, bits]) => [parseIp(text)!, bits] as const);
const v4Blocked = compile(V4_BLOCKED);
const v6Blocked = compile(V6_BLOCKED);
const v6Embedding = V6_EMBEDDING_V4.map(([text, bits, at]) => [parseIp(text)!, bits, at] as const);

/** Whether an address (4 or 16 bytes) is publicly routable. */
export function isPublicAddress(addr: Uint8Array): boolean {
  if (addr.length === 4) return !v4Blocked.some(([p, bits]) => inRange(addr, p, bits));
  for (const [prefix, bits, at] of v6Embedding) {
    if (inRange(addr, prefix, bits)) {
      const embedded = addr.subarray(at, at + 4);
      // ::/96 also holds :: and ::1, which are not IPv4 addresses in disguise.
      if (bits === 96 && at === 12 && embedded[0] === 0) return false;
      return isPublicAddress(embedded);
    }
  }
  return !v6Blocked.some(([p, bits]) => inRange(addr, p, bits));
}

const metadataAddresses = METADATA_ADDRESSES.map((a) => parseIp(a)!);

/** Whether an address is a cloud metadata endpoint's (refused whatever the settings). */
export function isMetadataAddress(addr: Uint8Array): boolean {
  // An IPv4 address in IPv6 clothing (::ffff:a.b.c.d) is that IPv4 address.
  const mapped = addr.length === 16 && addr.subarray(0, 10).every((b) => b === 0) &&
    addr[10] === 0xff && addr[11] === 0xff;
  const bytes = mapped ? addr.subarray(12) : addr;
  return metadataAddresses.some((m) =>
    m.length === bytes.length && m.every((b, i) => b === bytes[i])
  );
}

const METADATA =
  "The url is a cloud metadata address, which hands out the host's credentials: never a webhook's target.";

/** Where an attempt connects: the URL's host and the one checked address to use for it. */
export interface Target {
  url: URL;
  /** The host as the URL names it, lowercase, without brackets or a trailing dot. */
  host: string;
  /** The checked address to connect to. */
  address: string;
  /** True when the URL names the address itself, so there is nothing to pin. */
  literal: boolean;
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
}

/** Parses a webhook URL and refuses what is not http(s) or carries credentials. */
export function parseWebhookUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UnsafeUrlError("The url must be an absolute http:// or https:// URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UnsafeUrlError("The url must use http:// or https://.");
  }
  if (url.username || url.password) {
    throw new UnsafeUrlError("The url may not contain a user name or password.");
  }
  if (!url.hostname) throw new UnsafeUrlError("The url must name a host.");
  return url;
}

const MAX_LITERALS = 1024;
/** Approved URLs that name an IP address, by allowPrivate and text: their check never changes. */
const approvedLiterals = new Map<string, Target>();

/**
 * Resolves a webhook URL to the address an attempt must connect to. Unless private URLs are
 * allowed, every address the host resolves to must be public (one bad answer spoils them all,
 * as the receiver's resolver might pick it).
 */
export async function resolveTarget(
  text: string,
  opts: { allowPrivate: boolean; resolver?: Resolver; signal?: AbortSignal },
): Promise<Target> {
  const approved = approvedLiterals.get(`${opts.allowPrivate}|${text}`);
  if (approved) return approved;
  const url = parseWebhookUrl(text);
  const host = hostOf(url);
  const literal = parseIp(host);
  if (literal) {
    if (isMetadataAddress(literal)) throw new UnsafeUrlError(METADATA);
    if (!opts.allowPrivate && !isPublicAddress(literal)) {
      throw new UnsafeUrlError(NOT_PUBLIC);
    }
    if (approvedLiterals.size >= MAX_LITERALS) approvedLiterals.clear();
    const target: Target = { url, host, address: host, literal: true };
    approvedLiterals.set(`${opts.allowPrivate}|${text}`, target);
    return target;
  }
  if (METADATA_NAMES.has(host)) throw new UnsafeUrlError(METADATA);
  if (opts.allowPrivate && host === "localhost") {
    return { url, host, address: "127.0.0.1", literal: false };
  }
  if (!opts.allowPrivate && (BLOCKED_NAMES.has(host) || host.endsWith(".localhost"))) {
    throw new UnsafeUrlError(NOT_PUBLIC);
  }
  const addresses = await (opts.resolver ?? systemResolver)(host, opts.signal);
  if (addresses.length === 0) throw new UnsafeUrlError("The url's host does not resolve.");
  const parsed = addresses.map((a) => [a, parseIp(a)] as const);
  if (parsed.some(([, bytes]) => bytes && isMetadataAddress(bytes))) {
    throw new UnsafeUrlError(METADATA);
  }
  if (!opts.allowPrivate && parsed.some(([, bytes]) => !bytes || !isPublicAddress(bytes))) {
    throw new UnsafeUrlError(NOT_PUBLIC);
  }
  const v4 = parsed.find(([, bytes]) => bytes?.length === 4);
  return { url, host, address: (v4 ?? parsed[0])[0], literal: false };
}
