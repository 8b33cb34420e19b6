import { dirname } from "node:path";
import { keepPrivate } from "../../core/files.ts";
import { createKeyring, generateAppKey, type Keyring } from "../../core/keyring.ts";
import { isFilePath, type Settings, SettingsError } from "../../core/settings.ts";
import { readAppKeyCheck, writeAppKeyCheck } from "../../kv/service/app_key_check.ts";
import { where } from "../../kv/store/open.ts";
import { log } from "../../core/log.ts";
import type { Store } from "../../kv/store/store.ts";

const firstLine = (e: unknown) => String((e as Error)?.message ?? e).split("\n")[0];

/**
 * APP_KEY from the settings, else from `app.key` beside the KV file, else, for a store that holds
 * no key check yet, a new one written there (mode 0600, and said in the log: it must be kept with
 * the data); then checked against the store (see checkAppKey). With no data folder (":memory:", KV Connect, Deploy) it must be
 * set, except for ":memory:" where an ephemeral key is fine because the data is too.
 * `existing`: for the admin CLI, which never makes a key: none to be found is refused, naming
 * APP_KEY, and nothing is written.
 */
export async function loadKeyring(
  settings: Settings,
  kv?: Store,
  opts: { existing?: boolean } = {},
): Promise<Keyring> {
  // A key is made only for a store that has none yet: one made or imported with a key would
  // never open with a new one.
  const sealed = kv ? (await readAppKeyCheck(kv)).value : null;
  const keyring = await keyringFor(settings, { existing: opts.existing ?? false, sealed });
  if (kv) await checkAppKey(kv, keyring, settings, opts.existing ?? false);
  return keyring;
}

async function keyringFor(
  settings: Settings,
  { existing, sealed }: { existing: boolean; sealed: string | null },
): Promise<Keyring> {
  if (settings.appKey) return await createKeyring(settings.appKey);
  if (settings.kvPath === ":memory:") return await createKeyring(generateAppKey());
  if (!isFilePath(settings.kvPath)) {
    throw new SettingsError("APP_KEY: required when KV_PATH is not a local file");
  }
  const file = `${dirname(settings.kvPath)}/app.key`;
  try {
    return await fromFile(file);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  if (existing) {
    throw new SettingsError(
      `APP_KEY: not set, and there is no ${file}: set APP_KEY to the key the service runs with.`,
    );
  }
  if (sealed) {
    throw new SettingsError(
      `APP_KEY: not set, and there is no ${file}, but the store at ${settings.kvPath} was made (or imported) with a key: set APP_KEY to it, or copy its key file here as ${file} (after a move, the app.key beside the store it came from, such as data/app.key). No key was written.`,
    );
  }
  const key = generateAppKey();
  try {
    await Deno.writeTextFile(file, key + "\n", { createNew: true, mode: 0o600 });
    log.warn(
      `APP_KEY: none was set, so a new one was made and written to ${file}; keep that file with the store (back them up together): without it the webhook secrets in the store can't be read.`,
    );
    return await createKeyring(key);
  } catch (e) {
    // Another process (the CLI, a second instance) wrote it first: use theirs.
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    return await fromFile(file);
  }
}

async function fromFile(file: string): Promise<Keyring> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw e;
    throw new SettingsError(`APP_KEY: can't read ${file}: ${firstLine(e)}`);
  }
  if (!await keepPrivate(file)) {
    throw new SettingsError(
      `APP_KEY: ${file} can be read by other users, and this process can't change that; run \`chmod 600 ${file}\` as its owner.`,
    );
  }
  try {
    return await createKeyring(text.trim());
  } catch {
    throw new SettingsError(`APP_KEY: ${file} does not hold base64 of 32 bytes.`);
  }
}

const CHECK_TEXT = "app-key-check";

/** Whether `keyring` opens a store's sealed check (`["app_key_check"]`, as an export carries it). */
export const opensCheck = async (keyring: Keyring, sealed: string): Promise<boolean> =>
  await keyring.decrypt(sealed).catch(() => null) === CHECK_TEXT;

/**
 * The first process to open a store seals a known text with its APP_KEY; every later one must be
 * able to open it. A changed key would otherwise go unnoticed until every webhook secret failed
 * to decrypt, delivery by delivery.
 */
async function checkAppKey(
  kv: Store,
  keyring: Keyring,
  settings: Settings,
  existing: boolean,
): Promise<void> {
  const stored = await readAppKeyCheck(kv);
  if (stored.value === null) {
    // The first service to open the store seals it; the CLI only ever reads it.
    if (!existing) await writeAppKeyCheck(kv, stored, await keyring.encrypt(CHECK_TEXT));
    return;
  }
  if (!await opensCheck(keyring, stored.value)) {
    throw new SettingsError(
      `APP_KEY: not the key the store at ${where(settings)} was made with; start with that key ` +
        "(APP_KEY, or app.key beside the store), or use a new KV_PATH.",
    );
  }
}
