import type { Keyring } from "../core/keyring.ts";
import type { Settings } from "../core/settings.ts";
import type { Store } from "../kv/store/store.ts";

/** What every domain function runs against: the store, the settings, the keys. */
export interface Ctx {
  kv: Store;
  settings: Settings;
  keyring: Keyring;
}
