import type { Token } from "../../core/types.ts";
import { base62Fixed, randomBase62 } from "../../core/random.ts";

const RANDOM_CHARS = 32;
const CHECKSUM_CHARS = 6;
const PREFIX = { bot: "tcb_", personal: "tcp_" } as const;
const SHAPE = /^tc[bp]_[0-9A-Za-z]{38}$/;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of new TextEncoder().encode(text)) {
    crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * A token value: `tcb_`/`tcp_`, 32 random base62 characters, then a 6-character CRC32 of
 * them, so secret scanners can tell a real token from look-alike text offline.
 */
export function mintTokenValue(kind: Token["kind"]): string {
  const random = randomBase62(RANDOM_CHARS);
  return `${PREFIX[kind]}${random}${base62Fixed(crc32(random), CHECKSUM_CHARS)}`;
}

/** True when `value` has a token's shape and a valid checksum: no store read needed. */
export function isWellFormedToken(value: string): boolean {
  if (!SHAPE.test(value)) return false;
  const random = value.slice(4, 4 + RANDOM_CHARS);
  return value.slice(4 + RANDOM_CHARS) === base62Fixed(crc32(random), CHECKSUM_CHARS);
}

/** Whether a token may still be used: it exists, is unrevoked and unexpired at `now`. */
export const isTokenLive = (t: Token | null | undefined, now: number): t is Token =>
  !!t && !t.revoked_at && !(t.expires_at && Date.parse(t.expires_at) <= now);
