/**
 * Moving a workspace between stores (decisions.md, "Moving a workspace between stores"): `admin
 * export` writes every record of a store to a file of JSON lines (docs/export-format.md), `admin
 * import` writes such a file into an empty store, of any kind the service opens. Secrets stay
 * sealed, so the target must use the source's APP_KEY: checked before anything is written.
 */
import { exists } from "../core/files.ts";
import { invalid } from "../core/errors.ts";
import { isFilePath, type Settings, SettingsError } from "../core/settings.ts";
import { VERSION } from "../core/version.ts";
import { keys } from "../kv/keys.ts";
import { LAYOUT_VERSION } from "../kv/migrations.ts";
import { openStore, wrapStore } from "../kv/open.ts";
import { type ExportRecord, exportRecords, importRecords } from "../kv/store_export.ts";
import { backupUnsupported, copyStore } from "../kv/store_file.ts";
import { loadKeyring, opensCheck } from "./app_key.ts";
import type { Store } from "../kv/store.ts";

export const EXPORT_FORMAT = "teamchat-export";
export const EXPORT_VERSION = 1;

/** The file's first line. */
interface Header {
  format: typeof EXPORT_FORMAT;
  version: number;
  export_id: string;
  exported_at: string;
  service_version: string;
  layout: number;
  /** The source's APP_KEY check, sealed: the target's key must open it. */
  app_key_check: string | null;
}

/** The file's last line: without it, the file was cut short. */
interface Trailer {
  end: true;
  records: number;
}

/** What an import cut short leaves, so that running it again finishes it. */
interface ImportState {
  export_id: string;
  started_at: string;
  finished_at: string | null;
}

/**
 * Writes the store KV_PATH names to the new file `to`. A local store is exported from a copy
 * made as of one instant (kv/store_file.ts), so the export holds one instant as a backup does;
 * a remote one is read as it is, so writes to it should be stopped first (the README says how).
 */
export async function exportStore(
  settings: Settings,
  to: string,
): Promise<{ file: string; records: number }> {
  if (await exists(to)) {
    throw invalid(
      "to",
      `--to: ${to} already exists; an export never overwrites, choose a new file.`,
    );
  }
  const source = await openSource(settings);
  try {
    // The key must open the source's check: the target will be checked against it.
    await loadKeyring(settings, source.kv, { existing: true });
    const sealed = (await source.kv.get<string>(keys.appKeyCheck())).value;
    const header: Header = {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      export_id: crypto.randomUUID(),
      exported_at: new Date().toISOString(),
      service_version: VERSION,
      layout: LAYOUT_VERSION,
      app_key_check: sealed,
    };
    const records = await writeLines(to, header, exportRecords(source.kv));
    return { file: to, records };
  } finally {
    await source.close();
  }
}

/** The store to export: a local one through a copy of it as of now, a remote one as it is. */
async function openSource(settings: Settings): Promise<{ kv: Store; close(): Promise<void> }> {
  if (!isFilePath(settings.kvPath)) {
    const kv = await openStore(settings, { existing: true });
    return { kv, close: () => Promise.resolve(kv.close()) };
  }
  const unsupported = backupUnsupported();
  if (unsupported) throw new SettingsError(`export: ${unsupported}.`);
  const kv = await openStore(settings, { existing: true });
  kv.close();
  const dir = await Deno.makeTempDir({ prefix: "export-" });
  await copyStore(settings.kvPath, `${dir}/copy.sqlite3`);
  const copyPath = `${dir}/copy.sqlite3`;
  const copy = wrapStore(await Deno.openKv(copyPath), copyPath, { turns: false });
  return {
    kv: copy,
    close: async () => {
      copy.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function writeLines(
  file: string,
  header: Header,
  records: AsyncIterable<ExportRecord>,
): Promise<number> {
  const out = await Deno.open(file, { createNew: true, write: true, mode: 0o600 });
  const writer = out.writable.getWriter();
  const enc = new TextEncoder();
  let buffered: string[] = [JSON.stringify(header)];
  let size = 0;
  let count = 0;
  try {
    for await (const record of records) {
      const line = JSON.stringify(record);
      buffered.push(line);
      size += line.length;
      count++;
      if (size > 256 * 1024) {
        await writer.write(enc.encode(buffered.join("\n") + "\n"));
        [buffered, size] = [[], 0];
      }
    }
    const trailer: Trailer = { end: true, records: count };
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
 * Writes the export `from` into the store KV_PATH names, which must be empty, or hold what an
 * import of the same export cut short left (then it finishes it). The file is read through
 * once first: its format, that it is whole, and that this APP_KEY opens its key check.
 */
export async function importStore(settings: Settings, from: string): Promise<{ records: number }> {
  if (!await exists(from)) throw invalid("from", `--from: there is no file ${from}.`);
  const header = await checkFile(from);
  const keyring = await loadKeyring(settings, undefined, { existing: true });
  if (header.app_key_check && !await opensCheck(keyring, header.app_key_check)) {
    throw invalid(
      "from",
      `--from: ${from} was exported from a store with another APP_KEY; import it with that key (APP_KEY). Nothing was written.`,
    );
  }
  const kv = await openTarget(settings);
  try {
    const resuming = await startImport(kv, settings, header);
    const records = await importRecords(kv, recordsOf(from), { resuming });
    const done: ImportState = {
      export_id: header.export_id,
      started_at: (await kv.get<ImportState>(keys.importState())).value!.started_at,
      finished_at: new Date().toISOString(),
    };
    // Engines pull the pending deliveries the import brought.
    await kv.atomic().set(keys.importState(), done).set(keys.deliverySignal(), Date.now()).commit();
    return { records };
  } finally {
    kv.close();
  }
}

async function checkFile(from: string): Promise<Header> {
  let header: Header | null = null;
  let last = "";
  let lines = 0;
  for await (const line of linesOf(from)) {
    if (header === null) header = parseHeader(from, line);
    last = line;
    lines++;
  }
  if (header === null) throw invalid("from", `--from: ${from} is empty.`);
  const trailer = parseJson(last) as Partial<Trailer> | null;
  if (trailer?.end !== true || trailer.records !== lines - 2) {
    throw invalid(
      "from",
      `--from: ${from} ends before its last record: it was cut short; export again. Nothing was written.`,
    );
  }
  return header;
}

function parseHeader(from: string, line: string): Header {
  const header = parseJson(line) as Partial<Header> | null;
  if (header?.format !== EXPORT_FORMAT || typeof header.export_id !== "string") {
    throw invalid("from", `--from: ${from} is not an export of this service.`);
  }
  if (header.version !== EXPORT_VERSION || (header.layout ?? Infinity) > LAYOUT_VERSION) {
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

/** The target, opened as it is: an import writes the source's layout, and migrates nothing. */
async function openTarget(settings: Settings): Promise<Store> {
  if (isFilePath(settings.kvPath) && !await exists(settings.kvPath)) {
    const folder = settings.kvPath.replace(/\/[^/]*$/, "") || ".";
    if (!await exists(folder)) {
      throw new SettingsError(`KV_PATH: the folder ${folder} does not exist; create it first.`);
    }
  }
  if (!isFilePath(settings.kvPath)) return await openStore(settings, { existing: true });
  return wrapStore(await Deno.openKv(settings.kvPath), settings.kvPath, { turns: false });
}

/**
 * Refuses a store that holds data, unless an import of this export was cut short in it: then
 * whether it resumes that one.
 */
async function startImport(kv: Store, settings: Settings, header: Header): Promise<boolean> {
  const state = await kv.get<ImportState>(keys.importState());
  if (state.value?.export_id === header.export_id && state.value.finished_at === null) return true;
  for await (const _ of kv.list({ prefix: [] }, { limit: 1 })) {
    throw new SettingsError(
      `import: the store at KV_PATH (${settings.kvPath}) holds data; an import writes only into an empty store (or finishes its own that was cut short). Nothing was written.`,
    );
  }
  const started: ImportState = {
    export_id: header.export_id,
    started_at: new Date().toISOString(),
    finished_at: null,
  };
  const op = kv.atomic().check({ key: keys.importState(), versionstamp: null })
    .set(keys.importState(), started);
  if (header.app_key_check) op.set(keys.appKeyCheck(), header.app_key_check);
  if (!(await op.commit()).ok) throw new SettingsError("import: another import started meanwhile.");
  return false;
}

async function* recordsOf(from: string): AsyncGenerator<ExportRecord> {
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
