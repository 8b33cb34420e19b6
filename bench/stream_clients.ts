/// <reference lib="deno.worker" />
/**
 * A bench worker holding event streams open, as many clients would: it reads every byte, and in
 * "latency" mode notes when each message's event arrived on each stream (by the message id, which
 * the poster knows from the API's answer). Several run at once to use more than one core.
 */

export type StreamMode = "latency" | "drain";

export type Command =
  | { type: "open"; url: string; tokens: string[]; perToken: number; mode: StreamMode }
  | { type: "stop" };

export type Reply =
  | { type: "ready"; opened: number; refused: Record<string, number> }
  | {
    type: "stopped";
    /** Message id → the absolute times (ms) it arrived, one per stream. */
    arrivals: [string, number[]][];
    events: number;
    /** Streams the service ended while they were open (a slow reader is closed). */
    endedByService: number;
  };

const MARK = `"data":{"id":"`;
/** Bytes kept from the end of one read, so a mark split across two reads is still found. */
const CARRY = MARK.length + 36;
const now = () => performance.timeOrigin + performance.now();

const arrivals = new Map<string, number[]>();
const open = new Set<Deno.TcpConn>();
const readers: Promise<void>[] = [];
let events = 0;
let endedByService = 0;
let stopping = false;

/** Notes the arrival of every whole mark in `text`; how many there were. */
function note(text: string, at: number): number {
  let n = 0;
  for (let i = text.indexOf(MARK); i >= 0; i = text.indexOf(MARK, i + MARK.length)) {
    const id = text.slice(i + MARK.length, i + MARK.length + 36);
    if (id.length < 36) break;
    n++;
    const times = arrivals.get(id);
    if (times) times.push(at);
    else arrivals.set(id, [at]);
  }
  return n;
}

/**
 * Opens one stream over a raw socket (HTTP/1.1 by hand: fetch's per-chunk promise chain would
 * cost the client more than the service); resolves with the status, then reads on.
 */
async function connect(url: URL, token: string, mode: StreamMode): Promise<number> {
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  open.add(conn);
  await conn.write(new TextEncoder().encode(
    `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n` +
      `Authorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`,
  ));
  const buffer = new Uint8Array(mode === "latency" ? 64 * 1024 : 16 * 1024);
  const decoder = new TextDecoder();
  const first = await conn.read(buffer);
  const head = decoder.decode(buffer.subarray(0, first ?? 0));
  const status = Number(head.slice(9, 12));
  if (status !== 200) {
    open.delete(conn);
    conn.close();
    return status;
  }
  readers.push((async () => {
    let tail = "";
    try {
      for (;;) {
        const n = await conn.read(buffer);
        if (n === null) {
          if (!stopping) endedByService++;
          return;
        }
        if (mode === "latency") {
          const text = tail + decoder.decode(buffer.subarray(0, n));
          events += note(text, now());
          // A mark cut short (or its id) is found again, whole, with the next read.
          const cut = text.lastIndexOf(MARK);
          tail = cut >= 0 && cut + CARRY > text.length
            ? text.slice(cut)
            : text.slice(-(MARK.length - 1));
        } else {
          events += countEvents(buffer.subarray(0, n));
        }
      }
    } catch {
      if (!stopping) endedByService++;
    }
  })());
  return 200;
}

const NEWLINE = 10;
const E = 101;
const COLON = 58;
/** Counts "\nevent:" starts without decoding: draining must cost the client little. */
function countEvents(bytes: Uint8Array): number {
  let n = 0;
  for (let i = bytes.indexOf(NEWLINE); i >= 0; i = bytes.indexOf(NEWLINE, i + 1)) {
    if (bytes[i + 1] === E && bytes[i + 6] === COLON) n++;
  }
  return n;
}

self.onmessage = async (e: MessageEvent<Command>) => {
  const command = e.data;
  if (command.type === "open") {
    const statuses = await Promise.all(
      command.tokens.flatMap((token) =>
        Array.from(
          { length: command.perToken },
          () => connect(new URL(command.url), token, command.mode),
        )
      ),
    );
    const refused: Record<string, number> = {};
    for (const s of statuses.filter((s) => s !== 200)) refused[s] = (refused[s] ?? 0) + 1;
    const opened = statuses.filter((s) => s === 200).length;
    self.postMessage({ type: "ready", opened, refused } satisfies Reply);
  } else {
    stopping = true;
    for (const conn of open) conn.close();
    await Promise.all(readers);
    self.postMessage(
      { type: "stopped", arrivals: [...arrivals], events, endedByService } satisfies Reply,
    );
  }
};
