/** What the bare baselines share: their arguments, a message-like record, the server. */

/** `<port> <kvPath> ...rest` from the command line. */
export function baselineArgs(): { port: number; kvPath: string; rest: string[] } {
  const [port, kvPath, ...rest] = Deno.args;
  if (!port || !kvPath) throw new Error("usage: <port> <kvPath> [...]");
  return { port: Number(port), kvPath, rest };
}

let lastMs = 0;
let seq = 0;

/**
 * An id that sorts by creation time, as the service's UUIDv7 ids do: keys built from it append
 * to the end of the store's index instead of landing at random places in it.
 */
export function timeOrderedId(): string {
  const now = Date.now();
  seq = now === lastMs ? seq + 1 : 0;
  lastMs = now;
  const hex = now.toString(16).padStart(12, "0") + seq.toString(16).padStart(4, "0") +
    crypto.randomUUID().replaceAll("-", "").slice(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}

/** A record with the fields and about the size of a stored message. */
export function messageLike(channelId: string, pos: number, body: string) {
  const now = new Date().toISOString();
  return {
    id: timeOrderedId(),
    channel_id: channelId,
    team_id: crypto.randomUUID(),
    body,
    type: "standard",
    author: { id: crypto.randomUUID(), name: "Bench Admin", type: "human" },
    reply_to_id: null,
    thread_root_id: null,
    sent_to_channel: false,
    reactions: [],
    created_at: now,
    edited_at: null,
    deleted_at: null,
    client_uuid: null,
    timeline_pos: pos,
    thread_pos: null,
  };
}

/** A message body of about the size a chat message has. */
export const sampleBody = (n: number) =>
  `Bench message ${n}: the quick brown fox jumps over the lazy dog, twice over, for size.`;

export const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });

/** Serves `handler` on loopback; `/up` answers at once so the bench knows it is ready. */
export function serveBare(port: number, handler: (req: Request) => Promise<Response>) {
  Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, (req) => {
    if (new URL(req.url).pathname === "/up") return new Response("ok");
    return handler(req);
  });
}

/** Requests a group commit takes at most: well within a commit's 1,000 mutations and 800 KiB. */
const GROUP = 64;

/**
 * Group commit, as a baseline makes it: the items of every request waiting (at most GROUP) written
 * by `write` into one atomic commit, one commit in flight at a time. Returns the function a
 * request calls with its item, settled once the commit holding it is in.
 */
export function groupCommitter<T>(
  kv: Deno.Kv,
  write: (op: Deno.AtomicOperation, items: T[]) => void,
): (item: T) => Promise<void> {
  const waiting: { item: T; done: () => void }[] = [];
  let committing = false;
  const commitWaiting = async () => {
    committing = true;
    while (waiting.length > 0) {
      const group = waiting.splice(0, GROUP);
      const op = kv.atomic();
      write(op, group.map((w) => w.item));
      await op.commit();
      for (const { done } of group) done();
    }
    committing = false;
  };
  return (item) =>
    new Promise<void>((done) => {
      waiting.push({ item, done });
      if (!committing) commitWaiting();
    });
}
