/**
 * What kind of store the service runs on, and what follows from it. The embedded store (a file or
 * :memory:) allows 100 checks per commit and answers through one worker thread in well under a
 * millisecond. A remote one (KV Connect, Deno Deploy) is a round trip away: KV Connect allows 10
 * checks (denokv, proto/limits.rs) and Deno Deploy publishes no figure, so 10 there too.
 */
import { isFilePath } from "../../core/settings.ts";

export interface StoreKind {
  /** Checks one commit may carry. */
  maxChecks: number;
  /**
   * Waves of shared reads in flight at once (kv/store/read_coalescer.ts). On the embedded store every
   * read goes through its one worker, so reads wait for the wave in flight and share the next:
   * far fewer calls. On a remote store that wait would double every read's latency.
   */
  readWaves: number;
}

const EMBEDDED: StoreKind = { maxChecks: 100, readWaves: 1 };
const REMOTE: StoreKind = { maxChecks: 10, readWaves: 8 };

/** Keys one getMany may name, on every store. */
export const GET_MANY_MAX = 10;

/** Mutations one commit may carry, on every store. */
export const MAX_MUTATIONS = 1_000;

/** What a store opened at `path` (a KV_PATH; unset on Deno Deploy) is. */
export const kindOf = (path: string | undefined): StoreKind =>
  path === ":memory:" || isFilePath(path) ? EMBEDDED : REMOTE;
