/**
 * The public address the service last started with, recorded in the store: what the admin CLI
 * builds the URLs it prints from (login links, incoming-webhook URLs), so they point where the
 * service answers whatever the CLI's own environment says, unless it sets BASE_URL itself.
 */
import type { Ctx } from "./context.ts";
import { getRecordedBaseUrl, setRecordedBaseUrl } from "../kv/service_record.ts";
import type { Store } from "../kv/store.ts";

/** Records the service's BASE_URL; a write only when it changed. */
export async function recordBaseUrl(ctx: Ctx): Promise<void> {
  if ((await getRecordedBaseUrl(ctx.kv)) !== ctx.settings.baseUrl) {
    await setRecordedBaseUrl(ctx.kv, ctx.settings.baseUrl);
  }
}

/** The BASE_URL the service last started with, if one ever started on this store. */
export const recordedBaseUrl = (kv: Store): Promise<string | null> => getRecordedBaseUrl(kv);
