/**
 * What the service records about itself in the store, for the admin CLI: the address and Deno it
 * last started with, and each instance that runs now.
 */
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";

/** A running instance, as it says of itself. */
export interface InstanceRecord {
  base_url: string;
  /** Whether BASE_URL was set, rather than made from PORT. */
  explicit: boolean;
  /** Deno.version.deno of the instance. */
  deno: string;
  started_at: number;
  /** Epoch ms: past it, the instance counts as gone (it is renewed well before). */
  alive_until: number;
}

export const getRecordedBaseUrl = async (kv: Store): Promise<string | null> =>
  (await kv.get<string>(keys.serviceBaseUrl())).value;

export const setRecordedBaseUrl = (kv: Store, url: string) => kv.set(keys.serviceBaseUrl(), url);

export const getRecordedDeno = async (kv: Store): Promise<string | null> =>
  (await kv.get<string>(keys.serviceDeno())).value;

export const setRecordedDeno = (kv: Store, version: string) => kv.set(keys.serviceDeno(), version);

/** Records an instance until `alive_until` (and a minute, to tidy). */
export const putInstance = (kv: Store, id: string, record: InstanceRecord) =>
  kv.set(keys.serviceInstance(id), record, { expireIn: record.alive_until - Date.now() + 60_000 });

export const dropInstance = (kv: Store, id: string) => kv.delete(keys.serviceInstance(id));

/** The instances that said, lately enough, that they run. */
export async function liveInstances(kv: Store, now = Date.now()): Promise<InstanceRecord[]> {
  const out: InstanceRecord[] = [];
  for await (const e of kv.list<InstanceRecord>({ prefix: keys.serviceInstances() })) {
    if (e.value.alive_until > now) out.push(e.value);
  }
  return out;
}
