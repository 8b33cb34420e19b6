/**
 * A store that answers like a remote one (Deno Deploy's KV is FoundationDB, milliseconds
 * away): every read, list page and commit waits `delayMs` before it goes to the local file.
 * For the bench only, installed by bench/loopback_main.ts when BENCH_KV_DELAY_MS is set. The
 * service is given a KV Connect URL naming the file (`remoteUrlOf`), so it treats the store as
 * remote in every way (10 checks per commit, reads in flight at once, no queues).
 */
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function delayedAtomic(op: Deno.AtomicOperation, delayMs: number): Deno.AtomicOperation {
  const commit = op.commit.bind(op);
  op.commit = async () => {
    await wait(delayMs);
    return await commit();
  };
  return op;
}

async function* delayedList<T>(
  iter: Deno.KvListIterator<T>,
  delayMs: number,
  batchSize: number,
): AsyncGenerator<Deno.KvEntry<T>> {
  let n = 0;
  for (;;) {
    // One round trip per page the store would send.
    if (n % batchSize === 0) await wait(delayMs);
    const next = await iter.next();
    if (next.done) return;
    n++;
    yield next.value;
  }
}

const REMOTE_PREFIX = "https://remote-kv.bench.invalid";

/** A KV Connect URL that stands for the local file at `path`. */
export const remoteUrlOf = (path: string) => `${REMOTE_PREFIX}${path}`;

/** The local file a `remoteUrlOf` URL stands for; any other path as it is. */
export const localPathOf = (path: string | undefined) =>
  path?.startsWith(REMOTE_PREFIX) ? path.slice(REMOTE_PREFIX.length) : path;

/** `kv` with `delayMs` added to every operation that would cross the network. */
export function delayed(kv: Deno.Kv, delayMs: number): Deno.Kv {
  const get = kv.get.bind(kv);
  const getMany = kv.getMany.bind(kv);
  const list = kv.list.bind(kv);
  const atomic = kv.atomic.bind(kv);
  const set = kv.set.bind(kv);
  const del = kv.delete.bind(kv);
  Object.assign(kv, {
    get: async (...args: Parameters<Deno.Kv["get"]>) => (await wait(delayMs), await get(...args)),
    getMany: async (...args: Parameters<Deno.Kv["getMany"]>) => (
      await wait(delayMs), await getMany(...args)
    ),
    set: async (...args: Parameters<Deno.Kv["set"]>) => (await wait(delayMs), await set(...args)),
    delete: async (...args: Parameters<Deno.Kv["delete"]>) => (
      await wait(delayMs), await del(...args)
    ),
    atomic: () => delayedAtomic(atomic(), delayMs),
    list: <T>(selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
      const iter = list<T>(selector, options);
      const wrapped = delayedList(iter, delayMs, options?.batchSize ?? options?.limit ?? 500);
      return Object.defineProperty(wrapped, "cursor", { get: () => iter.cursor });
    },
  });
  return kv;
}
