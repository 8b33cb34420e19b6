/**
 * A SOCKS5 proxy on 127.0.0.1 that only this process can use, so an attempt reaches the address
 * the SSRF check approved while HTTP and TLS (Host, SNI, certificate) still run end to end against
 * the URL's host name. Deno's fetch offers no "connect to this IP" option, but it speaks SOCKS5
 * to a proxy, for http:// and https:// alike, without resolving the name itself: the proxy
 * credentials carry the checked address, and the tunnel dials exactly that address.
 */
import { randomBase62 } from "../random.ts";

const VERSION = 5;
const USERNAME_PASSWORD = 2;
const NO_ACCEPTABLE_METHOD = 0xff;
const CONNECT = 1;
const SUCCEEDED = 0;
const GENERAL_FAILURE = 1;
const NOT_ALLOWED = 2;
const NETWORK_UNREACHABLE = 3;
const HOST_UNREACHABLE = 4;
const CONNECTION_REFUSED = 5;
const TTL_EXPIRED = 6;
const ADDRESS_LENGTHS: Record<number, number | "name"> = { 1: 4, 3: "name", 4: 16 };

/** What a client asked to reach, and with which credentials. */
interface Asked {
  password: string;
  port: number;
}

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
      url: `socks5://127.0.0.1:${port}`,
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
      const asked = await handshake(client);
      const [secret, address] = asked?.password.split("|") ?? [];
      if (!asked || secret !== this.#password || !address) {
        await client.write(reply(NOT_ALLOWED));
        return;
      }
      try {
        upstream = await Deno.connect({ hostname: address, port: asked.port });
      } catch (e) {
        // Said in SOCKS's words, so the attempt's error names the cause, as a direct one does.
        await client.write(reply(failureOf(e)));
        return;
      }
      this.#conns.add(upstream);
      await client.write(reply(SUCCEEDED));
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
}

/** SOCKS5's reply code for a failed connect (RFC 1928, 6). */
function failureOf(e: unknown): number {
  if (e instanceof Deno.errors.ConnectionRefused) return CONNECTION_REFUSED;
  if (e instanceof Deno.errors.TimedOut) return TTL_EXPIRED;
  const text = String((e as Error)?.message ?? e);
  if (/network is unreachable/i.test(text)) return NETWORK_UNREACHABLE;
  if (/unreachable|no route/i.test(text)) return HOST_UNREACHABLE;
  return GENERAL_FAILURE;
}

/** A SOCKS5 reply with no bound address (the client has no use for it). */
const reply = (status: number) => new Uint8Array([VERSION, status, 0, 1, 0, 0, 0, 0, 0, 0]);

/**
 * The greeting, the username/password exchange (RFC 1929) and the CONNECT request, up to the
 * point where the tunnel answers. The host the client names is read and ignored: the credentials
 * say where to go. Null when the client speaks anything else.
 */
async function handshake(conn: Deno.Conn): Promise<Asked | null> {
  const [version, count] = await readExactly(conn, 2);
  const methods = await readExactly(conn, count);
  if (version !== VERSION || !methods.includes(USERNAME_PASSWORD)) {
    await conn.write(new Uint8Array([VERSION, NO_ACCEPTABLE_METHOD]));
    return null;
  }
  await conn.write(new Uint8Array([VERSION, USERNAME_PASSWORD]));
  const [, userLength] = await readExactly(conn, 2);
  await readExactly(conn, userLength);
  const [passwordLength] = await readExactly(conn, 1);
  const password = new TextDecoder().decode(await readExactly(conn, passwordLength));
  await conn.write(new Uint8Array([1, 0]));
  const [, command, , type] = await readExactly(conn, 4);
  const length = ADDRESS_LENGTHS[type];
  if (command !== CONNECT || length === undefined) return null;
  await readExactly(conn, length === "name" ? (await readExactly(conn, 1))[0] : length);
  const [high, low] = await readExactly(conn, 2);
  const port = high * 256 + low;
  return port > 0 ? { password, port } : null;
}

async function readExactly(conn: Deno.Conn, n: number): Promise<Uint8Array> {
  const buf = new Uint8Array(n);
  for (let got = 0; got < n;) {
    const read = await conn.read(buf.subarray(got));
    if (read === null) throw new Error("the client closed the connection");
    got += read;
  }
  return buf;
}
