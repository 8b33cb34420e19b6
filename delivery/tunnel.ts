/**
 * A CONNECT proxy on 127.0.0.1 that only this process can use, so an https:// attempt reaches the
 * address the SSRF check approved while TLS (SNI, certificate) still runs end to end against the
 * URL's host name. Deno's fetch offers no "connect to this IP" option for https, but it does
 * speak CONNECT to a proxy: the proxy credentials carry the checked address, and the tunnel
 * dials exactly that address, never resolving the name itself.
 */
import { randomBase62 } from "../domain/tokens.ts";

const MAX_HEAD_BYTES = 8 * 1024;
const enc = new TextEncoder();

export class Tunnel {
  readonly #listener: Deno.Listener;
  readonly #password = randomBase62(32);
  readonly #conns = new Set<Deno.Conn>();

  constructor() {
    this.#listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.#accept();
  }

  /** The proxy settings for an HttpClient whose connections must go to `address`. */
  proxyFor(address: string): Deno.Proxy {
    const { port } = this.#listener.addr as Deno.NetAddr;
    return {
      url: `http://127.0.0.1:${port}`,
      basicAuth: { username: "pin", password: `${this.#password}|${address}` },
    };
  }

  close(): void {
    this.#listener.close();
    for (const conn of this.#conns) conn.close();
    this.#conns.clear();
  }

  async #accept() {
    try {
      for await (const conn of this.#listener) this.#serve(conn);
    } catch {
      // The listener was closed.
    }
  }

  async #serve(client: Deno.Conn) {
    this.#conns.add(client);
    let upstream: Deno.Conn | undefined;
    try {
      const head = await readHead(client);
      const target = head && this.#authorize(head);
      if (!target) {
        await client.write(enc.encode("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"));
        return;
      }
      upstream = await Deno.connect(target);
      this.#conns.add(upstream);
      await client.write(enc.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
      await Promise.allSettled([
        client.readable.pipeTo(upstream.writable),
        upstream.readable.pipeTo(client.writable),
      ]);
    } catch {
      // The attempt sees the broken connection and records it; nothing to add here.
    } finally {
      for (const conn of [client, upstream]) {
        if (conn && this.#conns.delete(conn)) {
          try {
            conn.close();
          } catch {
            // Already closed by pipeTo.
          }
        }
      }
    }
  }

  /** The checked address and port from a CONNECT head with our credentials, else null. */
  #authorize(head: string): { hostname: string; port: number } | null {
    const request = /^CONNECT (\S+) HTTP\/1\.[01]\r\n/.exec(head);
    const auth = /\r\nproxy-authorization: basic ([A-Za-z0-9+/=]+)\r\n/i.exec(head);
    if (!request || !auth) return null;
    const port = Number(/:(\d+)$/.exec(request[1])?.[1]);
    const [, password = ""] = atob(auth[1]).split(/:(.*)/s);
    const [secret, address] = password.split("|");
    if (secret !== this.#password || !address || !(port > 0 && port < 65536)) return null;
    return { hostname: address, port };
  }
}

/** Reads up to the blank line that ends a request head; null when it is too long or cut. */
async function readHead(conn: Deno.Conn): Promise<string | null> {
  const buf = new Uint8Array(MAX_HEAD_BYTES);
  let used = 0;
  while (used < buf.length) {
    const n = await conn.read(buf.subarray(used));
    if (n === null) return null;
    used += n;
    const text = new TextDecoder().decode(buf.subarray(0, used));
    if (text.includes("\r\n\r\n")) return text;
  }
  return null;
}
