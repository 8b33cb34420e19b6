import { keys } from "./keys.ts";
import type { Store } from "./store.ts";

export const getRecordedBaseUrl = async (kv: Store): Promise<string | null> =>
  (await kv.get<string>(keys.serviceBaseUrl())).value;

export const setRecordedBaseUrl = (kv: Store, url: string) => kv.set(keys.serviceBaseUrl(), url);
