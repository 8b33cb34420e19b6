import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";

/** The known text sealed with the APP_KEY the store was first opened with (domain/data/app_key.ts). */
export const readAppKeyCheck = (kv: Store) => kv.get<string>(keys.appKeyCheck());

/** Seals the check, unless another process did first. */
export async function writeAppKeyCheck(
  kv: Store,
  read: Deno.KvEntryMaybe<string>,
  sealed: string,
): Promise<void> {
  await kv.atomic().check(read).set(keys.appKeyCheck(), sealed).commit();
}
