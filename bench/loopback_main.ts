/**
 * Runs main.ts unchanged, except that its listener is pinned to 127.0.0.1 whatever HOST the
 * environment sets (the container image sets 0.0.0.0): a benchmark must not open a port beyond
 * loopback. With BENCH_KV_DELAY_MS, its store answers as a remote one would (bench/remote_kv.ts).
 */
import { delayed, localPathOf } from "./remote_kv.ts";

const serve = Deno.serve;
// deno-lint-ignore no-explicit-any
(Deno as any).serve = (options: Deno.ServeTcpOptions, handler?: Deno.ServeHandler) =>
  handler
    ? serve({ ...options, hostname: "127.0.0.1" }, handler)
    : serve({ ...options, hostname: "127.0.0.1" } as Deno.ServeTcpOptions & Deno.ServeInit);

// A remote store's round trips, when a scenario asks for them (bench/remote_kv.ts).
const delayMs = Number(Deno.env.get("BENCH_KV_DELAY_MS") ?? 0);
if (delayMs > 0) {
  const openKv = Deno.openKv;
  Object.defineProperty(Deno, "openKv", {
    value: async (path?: string) => delayed(await openKv(localPathOf(path)), delayMs),
  });
}

await import("../main.ts");
