/**
 * The export file (docs/export-format.md): a header, the records as JSON lines, and a trailer with
 * their count and digests; written whole under a temporary name, and read through once before an
 * import writes anything.
 */
import { createHash } from "node:crypto";
import { sameText } from "../../core/same_text.ts";
import { invalid } from "../../core/errors.ts";
import type { Keyring } from "../../core/keyring.ts";
import { VERSION } from "../../core/version.ts";
import { LAYOUT_VERSION } from "../../kv/store/migrations.ts";
import type { ExportRecord } from "../../kv/export/store_export.ts";
import { decode, decodeKey, type Json } from "../../kv/export/export_format.ts";

export const EXPORT_FORMAT = "teamchat-export";
/**
 * The format this release writes. 2 from 0.32.0: 0.31.0 reads only 1, and would import one of
 * these without checking its signature and without records it doesn't know (scheduled messages,
 * pins, emails, app tokens, Socket Mode's backlog), so it must refuse them. This release reads 1
 * (signed, as 0.32.0's development builds wrote it) and 2.
 */
export const EXPORT_VERSION = 2;
const READS = new Set([1, EXPORT_VERSION]);

/** The file's first line. */
export interface Header {
  format: typeof EXPORT_FORMAT;
  version: number;
  export_id: string;
  exported_at: string;
  service_version: string;
  layout: number;
  /** The source's APP_KEY check, sealed: the target's key must open it. */
  app_key_check: string | null;
}

/**
 * The file's last line: without it, the file was cut short. `hmac_sha256` is the hex HMAC-SHA256,
 * keyed from APP_KEY, of the header and record lines (each with its newline): a file edited and
 * given a digest computed again is refused, since only a holder of the key can sign it. `sha256`,
 * of the record lines alone, is what releases before 0.32.0 check.
 */
interface Trailer {
  end: true;
  records: number;
  sha256?: string;
  hmac_sha256?: string;
}

/** Whether a file's signature is this APP_KEY's: made with it, made with none, or neither. */
export type Signed = "signed" | "unsigned" | "mismatch";

/** Writes the header, the records and the trailer into the new file `file`; how many records. */
export async function writeLines(
  file: string,
  { header, records, keyring }: {
    header: Header;
    records: AsyncIterable<ExportRecord>;
    keyring: Keyring;
  },
): Promise<number> {
  const out = await Deno.open(file, { createNew: true, write: true, mode: 0o600 });
  const writer = out.writable.getWriter();
  const enc = new TextEncoder();
  const first = JSON.stringify(header);
  let buffered: string[] = [first];
  let size = 0;
  let count = 0;
  const digest = createHash("sha256");
  const mac = keyring.exportMac().update(first + "\n");
  try {
    for await (const record of records) {
      const line = JSON.stringify(record);
      digest.update(line + "\n");
      mac.update(line + "\n");
      buffered.push(line);
      size += line.length;
      count++;
      if (size > 256 * 1024) {
        await writer.write(enc.encode(buffered.join("\n") + "\n"));
        [buffered, size] = [[], 0];
      }
    }
    const trailer: Trailer = {
      end: true,
      records: count,
      sha256: digest.digest("hex"),
      hmac_sha256: mac.hex(),
    };
    buffered.push(JSON.stringify(trailer));
    await writer.write(enc.encode(buffered.join("\n") + "\n"));
    await writer.close();
    return count;
  } catch (e) {
    await writer.abort().catch(() => {});
    await Deno.remove(file).catch(() => {});
    throw e;
  }
}

/**
 * Reads the whole file before anything is written: the header, every record (a key and a value
 * that decode), the trailer with its count and digest; and whether `keyring` signed it. A fault
 * is one line naming the line; the caller decides what an unsigned or mismatched file is told.
 */
export async function checkFile(
  from: string,
  keyring: Keyring,
): Promise<{ header: Header; signed: Signed }> {
  let header: Header | null = null;
  let previous: string | null = null;
  let lines = 0;
  const digest = createHash("sha256");
  const mac = keyring.exportMac();
  for await (const line of linesOf(from)) {
    lines++;
    if (header === null) {
      header = parseHeader(from, line);
      mac.update(line + "\n");
      continue;
    }
    if (previous !== null) {
      checkRecord(from, previous, lines - 1);
      digest.update(previous + "\n");
      mac.update(previous + "\n");
    }
    previous = line;
  }
  if (header === null) throw invalid("from", `--from: ${from} is empty.`);
  const trailer = parseJson(previous ?? "") as Partial<Trailer> | null;
  if (trailer?.end !== true || trailer.records !== lines - 2) {
    throw invalid(
      "from",
      `--from: ${from} ends before its last record: it was cut short; export again. Nothing was written.`,
    );
  }
  if (trailer.sha256 !== undefined && trailer.sha256 !== digest.digest("hex")) {
    throw invalid(
      "from",
      `--from: ${from} does not match its digest: a record was changed or damaged after the export; export again. Nothing was written.`,
    );
  }
  const signed = trailer.hmac_sha256 === undefined
    ? "unsigned"
    : sameText(trailer.hmac_sha256, mac.hex())
    ? "signed"
    : "mismatch";
  return { header, signed };
}

/** That line `n` holds a record whose key and value decode, or the one line saying what doesn't. */
function checkRecord(from: string, line: string, n: number) {
  const fault = (why: string) =>
    invalid("from", `--from: ${from} line ${n}: ${why}. Nothing was written.`);
  const record = parseJson(line) as Partial<ExportRecord> | null;
  if (record === null || typeof record !== "object" || Array.isArray(record)) {
    throw fault("not a JSON record");
  }
  if (!Array.isArray(record.key) || record.key.length === 0 || !("value" in record)) {
    throw fault("a record needs a key (an array) and a value");
  }
  try {
    decodeKey(record.key);
    decode(record.value as Json);
  } catch (e) {
    throw fault(`its key or value can't be read (${String((e as Error).message ?? e)})`);
  }
  if (record.expires_at !== undefined && typeof record.expires_at !== "number") {
    throw fault("expires_at must be a number");
  }
}

function parseHeader(from: string, line: string): Header {
  const header = parseJson(line) as Partial<Header> | null;
  if (header?.format !== EXPORT_FORMAT || typeof header.export_id !== "string") {
    throw invalid("from", `--from: ${from} is not an export of this service.`);
  }
  if (!READS.has(header.version!) || (header.layout ?? Infinity) > LAYOUT_VERSION) {
    throw invalid(
      "from",
      `--from: ${from} was made by release ${header.service_version} (format ${header.version}, layout ${header.layout}), newer than this one (${VERSION}); import it with that release or a later one. Nothing was written.`,
    );
  }
  return header as Header;
}

const parseJson = (line: string): unknown => {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
};

/** The records of a checked file, in order. */
export async function* recordsOf(from: string): AsyncGenerator<ExportRecord> {
  let n = 0;
  for await (const line of linesOf(from)) {
    if (n++ === 0) continue;
    const record = JSON.parse(line) as ExportRecord | Trailer;
    if ("end" in record) return;
    yield record;
  }
}

async function* linesOf(file: string): AsyncGenerator<string> {
  const f = await Deno.open(file);
  let rest = "";
  for await (const chunk of f.readable.pipeThrough(new TextDecoderStream())) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop()!;
    yield* parts;
  }
  if (rest) yield rest;
}
