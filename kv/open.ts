import { dirname } from "node:path";
import { createKeyring, generateAppKey, type Keyring } from "../domain/keyring.ts";
import { isFilePath, type Settings } from "../domain/settings.ts";
import { probeQueues } from "./queue_support.ts";

/**
 * Opens the KV the settings name, creating the data folder for a file path, and finds out
 * whether it has queues (see kv/queue_support.ts).
 */
export async function openStore(settings: Settings): Promise<Deno.Kv> {
  if (isFilePath(settings.kvPath)) {
    await Deno.mkdir(dirname(settings.kvPath), { recursive: true });
  }
  const kv = await Deno.openKv(settings.kvPath);
  await probeQueues(kv, settings.kvPath);
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
