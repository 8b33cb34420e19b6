import { keys } from "./keys.ts";

export const getRecordedBaseUrl = async (kv: Deno.Kv): Promise<string | null> =>
  (await kv.get<string>(keys.serviceBaseUrl())).value;

export const setRecordedBaseUrl = (kv: Deno.Kv, url: string) => kv.set(keys.serviceBaseUrl(), url);
