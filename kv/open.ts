import { dirname } from "node:path";
import { createKeyring, generateAppKey, type Keyring } from "../domain/keyring.ts";
import { isFilePath, type Settings } from "../domain/settings.ts";
import { probeQueues } from "./queue_support.ts";
import { coalesceReads } from "./read_coalescer.ts";

/**
 * Opens the KV the settings name, creating the data folder for a file path, and finds out
 * whether it has queues (see kv/queue_support.ts).
 */
export async function openStore(settings: Settings): Promise<Deno.Kv> {
  if (isFilePath(settings.kvPath)) {
    await Deno.mkdir(dirname(settings.kvPath), { recursive: true });
  }
  const kv = coalesceReads(retryLockedCommits(await Deno.openKv(settings.kvPath)));
  await probeQueues(kv, settings.kvPath);
  return kv;
}

const LOCKED_RETRIES = 20;

/**
 * Makes every `kv.atomic()` commit try again when SQLite answers "database is locked". It does
 * so at once, without waiting out its busy timeout, when another process on the same file (the
 * CLI, an instance restarting after a crash) would otherwise deadlock with this one; SQLite's
 * advice is to retry the transaction. A commit that failed this way wrote nothing.
 */
export function retryLockedCommits(kv: Deno.Kv): Deno.Kv {
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    const commit = op.commit.bind(op);
    op.commit = async () => {
      for (let attempt = 1;; attempt++) {
        try {
          return await commit();
        } catch (e) {
          if (attempt >= LOCKED_RETRIES || !/database is locked/.test(String(e))) throw e;
          await new Promise((r) => setTimeout(r, 5 * attempt));
        }
      }
    };
    return op;
  };
  return kv;
}

/**
 * APP_KEY from the settings, else from `app.key` beside the KV file, else a new one written
 * there (mode 0600). With no data folder (":memory:", KV Connect, Deploy) it must be set,
 * except for ":memory:" where an ephemeral key is fine because the data is too.
 */
export async function loadKeyring(settings: Settings): Promise<Keyring> {
  if (settings.appKey) return await createKeyring(settings.appKey);
  if (settings.kvPath === ":memory:") return await createKeyring(generateAppKey());
  if (!isFilePath(settings.kvPath)) {
    throw new Error("APP_KEY: required when KV_PATH is not a local file");
  }
  const file = `${dirname(settings.kvPath)}/app.key`;
  try {
    return await createKeyring((await Deno.readTextFile(file)).trim());
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const key = generateAppKey();
  try {
    await Deno.writeTextFile(file, key + "\n", { createNew: true, mode: 0o600 });
    return await createKeyring(key);
  } catch (e) {
    // Another process (the CLI, a second instance) wrote it first: use theirs.
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    return await createKeyring((await Deno.readTextFile(file)).trim());
  }
}
