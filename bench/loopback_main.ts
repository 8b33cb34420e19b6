/**
 * Runs main.ts unchanged, except that its listener is pinned to 127.0.0.1 whatever HOST the
 * environment sets (the container image sets 0.0.0.0): a benchmark must not open a port beyond
 * loopback.
 */
const serve = Deno.serve;
// deno-lint-ignore no-explicit-any
(Deno as any).serve = (options: Deno.ServeTcpOptions, handler?: Deno.ServeHandler) =>
  handler
    ? serve({ ...options, hostname: "127.0.0.1" }, handler)
    : serve({ ...options, hostname: "127.0.0.1" } as Deno.ServeTcpOptions & Deno.ServeInit);

await import("../main.ts");
