import type { Context } from "hono";

/**
 * The address a request came from: the connection's peer, or behind a proxy (`TRUST_PROXY`) the
 * last hop of `X-Forwarded-For`, the one the proxy itself appended. Earlier hops are whatever the
 * client wrote, so they are never taken.
 */
export function clientAddress(c: Context, trustProxy: boolean): string {
  if (trustProxy) {
    const last = c.req.header("X-Forwarded-For")?.split(",").at(-1)?.trim();
    if (last) return last;
  }
  const info = c.env as Partial<Deno.ServeHandlerInfo<Deno.NetAddr>> | undefined;
  return info?.remoteAddr?.hostname ?? "unknown";
}
