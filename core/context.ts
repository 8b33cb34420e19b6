import type { Keyring } from "./keyring.ts";
import type { Settings } from "./settings.ts";

/** What every domain function runs against: the store, the settings, the keys. */
export interface Ctx {
  kv: Deno.Kv;
  settings: Settings;
  keyring: Keyring;
}
