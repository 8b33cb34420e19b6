let lastMs = 0;
let seq = 0;

/**
 * A UUIDv7: a valid UUID whose leading bits are the creation time, so keys built from ids sort
 * by creation and "newest first" is a reverse list. Ids minted in the same millisecond by this
 * process still sort in minting order (a 12-bit counter in rand_a).
 */
export function newId(now = Date.now()): string {
  if (now <= lastMs) {
    seq++;
    if (seq > 0xfff) {
      lastMs++;
      seq = 0;
    }
  } else {
    lastMs = now;
    seq = 0;
  }
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const ms = lastMs;
  bytes[0] = Math.floor(ms / 2 ** 40) & 0xff;
  bytes[1] = Math.floor(ms / 2 ** 32) & 0xff;
  bytes[2] = (ms >>> 24) & 0xff;
  bytes[3] = (ms >>> 16) & 0xff;
  bytes[4] = (ms >>> 8) & 0xff;
  bytes[5] = ms & 0xff;
  bytes[6] = 0x70 | (seq >>> 8);
  bytes[7] = seq & 0xff;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toHex();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}

/**
 * A message's Slack-style `ts`, `"<seconds>.<6 digits>"`, from microseconds since the epoch:
 * what Slack's clients key a message by, unique in its channel and increasing with creation.
 */
export const tsText = (micros: number): string =>
  `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, "0")}`;

/** A time in milliseconds, or as ISO text, as a Slack `ts` gives it (an event's, an edit's). */
export const tsOfMs = (ms: number): string => tsText(ms * 1000);
export const tsOfIso = (iso: string): string => tsOfMs(Date.parse(iso));

/** The `ts` of a message stored before messages had one: its id's millisecond, and its counter. */
export function legacyTs(id: string): string {
  const counter = parseInt(id.slice(15, 18), 16) || 0;
  return tsText(idTime(id) * 1000 + Math.min(counter, 999));
}

/** A message's `ts`: as stored, or for one stored before messages had one, made from its id. */
export const messageTs = (m: { id: string; ts?: string | null }): string => m.ts ?? legacyTs(m.id);

/** When a `newId` id was made (ms): its leading 48 bits. */
export const idTime = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

/** The time part of the ids made at `ms`: every id made at or after `ms` sorts after it. */
export const idsFrom = (ms: number): string => {
  const hex = Math.max(0, ms).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8)}`;
};

/**
 * A UUIDv7 no id made at `ms` sorts before: a place in time, at the start of that millisecond,
 * that names no event (a feed cursor past events its reader doesn't see).
 */
export const placeAt = (ms: number): string => `${idsFrom(ms)}-7000-8000-000000000000`;

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const uuidPattern = new RegExp(`^${UUID}$`, "i");

export const isUuid = (s: string): boolean => uuidPattern.test(s);

/**
 * An id as a client gave it, as ids are stored (lowercase), or null when it is no UUID: a UUID
 * names the same record in any case (RFC 9562 reads them so), and anything else names none.
 */
export const storedId = (text: string | null | undefined): string | null =>
  text && isUuid(text) ? text.toLowerCase() : null;

const uuidsIn = new RegExp(UUID, "gi");

/** A URL path with every UUID in it as ids are stored (see `storedId`). */
export const pathWithStoredIds = (path: string): string =>
  path.replace(uuidsIn, (id) => id.toLowerCase());

export const nowIso = (): string => new Date().toISOString();
