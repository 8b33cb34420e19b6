import type { Target } from "../url_safety.ts";
import { Tunnel } from "./tunnel.ts";

const MAX_CLIENTS = 256;

interface Pooled {
  client: Deno.HttpClient;
  users: number;
  lastUsed: number;
}

/**
 * HTTP clients pinned to checked addresses, kept per address so connections are reused across
 * attempts: their connections go through the SOCKS5 tunnel, which dials the checked address while
 * the request (and TLS) still name the URL's host. A URL that names an IP needs no pinning.
 */
export class Connector {
  readonly #pool = new Map<string, Pooled>();
  readonly #caCerts: string[] | undefined;
  #tunnel: Tunnel | undefined;

  /** `caCerts`: extra roots to trust, for tests with their own certificate authority. */
  constructor(opts: { caCerts?: string[] } = {}) {
    this.#caCerts = opts.caCerts;
  }

  /**
   * Runs `send` with the client for `target`. A client is only closed while nobody uses it.
   * Clients of URLs that name an IP (nothing to pin) are pooled too, so that `close` ends every
   * connection the engine kept alive, rather than leaving them to the runtime's shared client.
   */
  async with<T>(target: Target, send: (client?: Deno.HttpClient) => Promise<T>): Promise<T> {
    const key = this.#key(target);
    let pooled = this.#pool.get(key);
    if (!pooled) {
      this.#trim();
      pooled = { client: this.#open(target), users: 0, lastUsed: 0 };
      this.#pool.set(key, pooled);
    }
    pooled.users++;
    try {
      return await send(pooled.client);
    } finally {
      pooled.users--;
      pooled.lastUsed = Date.now();
    }
  }

  close(): void {
    for (const { client } of this.#pool.values()) client.close();
    this.#pool.clear();
    this.#tunnel?.close();
    this.#tunnel = undefined;
  }

  #key(t: Target): string {
    return `${t.literal ? "direct" : "pinned"}|${t.address}`;
  }

  #open(t: Target): Deno.HttpClient {
    const caCerts = this.#caCerts;
    if (t.literal) return Deno.createHttpClient({ caCerts });
    this.#tunnel ??= new Tunnel();
    return Deno.createHttpClient({ caCerts, proxy: this.#tunnel.proxyFor(t.address) });
  }

  /** Closes the least recently used idle clients once the pool is full. */
  #trim() {
    if (this.#pool.size < MAX_CLIENTS) return;
    const idle = [...this.#pool].filter(([, p]) => p.users === 0)
      .sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    for (const [key, p] of idle.slice(0, Math.ceil(MAX_CLIENTS / 4))) {
      p.client.close();
      this.#pool.delete(key);
    }
  }
}
