/**
 * What one commit may check, by store. The embedded store (a file or :memory:) allows 100 checks
 * per commit; KV Connect (denokv, proto/limits.rs) allows 10; Deno Deploy publishes no figure,
 * so it gets 10 too, as does any store opened elsewhere than through `declareStore`.
 */
import { isFilePath } from "../core/settings.ts";

const EMBEDDED_MAX_CHECKS = 100;
const REMOTE_MAX_CHECKS = 10;

const checksByStore = new WeakMap<Deno.Kv, number>();

/** Records what `kv`, opened at `path` (a KV_PATH; unset on Deno Deploy), allows per commit. */
export function declareStore(kv: Deno.Kv, path: string | undefined): void {
  const embedded = path === ":memory:" || isFilePath(path);
  checksByStore.set(kv, embedded ? EMBEDDED_MAX_CHECKS : REMOTE_MAX_CHECKS);
}

/** How many checks one commit to `kv` may carry. */
export const maxChecks = (kv: Deno.Kv): number => checksByStore.get(kv) ?? REMOTE_MAX_CHECKS;
