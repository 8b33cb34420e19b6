/**
 * Reads again until something is there or time is up: for an answer another process writes to
 * the store (an app's first Home, published while its person waits), where no bus reaches.
 */
export async function pollFor<T>(
  read: () => Promise<T | null>,
  { everyMs, withinMs }: { everyMs: number; withinMs: number },
): Promise<T | null> {
  const until = Date.now() + withinMs;
  for (;;) {
    const found = await read();
    if (found !== null || Date.now() + everyMs > until) return found;
    await new Promise((done) => setTimeout(done, everyMs));
  }
}
