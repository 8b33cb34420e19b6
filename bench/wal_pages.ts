/**
 * Pages a local store's writer puts into its write-ahead log, counted from outside the service:
 * the store's one SQLite thread writes each page a commit changed whole, and how many it writes
 * bounds how fast everything that commits goes (docs/performance.md). Read from the WAL index
 * (`<store>-shm`), whose header holds the log's last frame; the log starts again from its first
 * frame once SQLite copied it all back into the file.
 */

/** Where the WAL index header keeps the last valid frame (`mxFrame`, a native-endian u32). */
const MX_FRAME_AT = 16;
const EVERY_MS = 2;

export interface WalPages {
  /** Stops counting; the pages written since the start. */
  stop(): Promise<number>;
}

/** Counts the pages written to `kvPath`'s log from now on, reading its index every 2 ms. */
export function countWalPages(kvPath: string): WalPages {
  let [pages, last, stopped] = [0, -1, false];
  const header = new Uint8Array(MX_FRAME_AT + 4);
  // Opened once: the bench process that reads it also answers the service's deliveries.
  const opened = Deno.open(`${kvPath}-shm`, { read: true });
  const sample = async () => {
    const file = await opened;
    await file.seek(0, Deno.SeekMode.Start);
    if ((await file.read(header)) !== header.length) return;
    const frame = new DataView(header.buffer).getUint32(MX_FRAME_AT, true);
    // A log that started again holds only what was written since: the frame number is that count.
    if (last >= 0) pages += frame >= last ? frame - last : frame;
    last = frame;
  };
  const counting = (async () => {
    while (!stopped) {
      await sample().catch(() => {});
      await new Promise((r) => setTimeout(r, EVERY_MS));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await counting;
      await sample().catch(() => {});
      (await opened.catch(() => null))?.close();
      return pages;
    },
  };
}
