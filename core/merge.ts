/**
 * Merges sources that are each sorted by `order` into one sorted sequence, reading each source
 * only as far as the merged sequence is consumed: a binary heap of the sources' next items.
 */
export async function* mergeSorted<T>(
  sources: AsyncIterable<T>[],
  order: (item: T) => string,
): AsyncGenerator<T> {
  const heads: { item: T; at: string; rest: AsyncIterator<T> }[] = [];
  const less = (i: number, j: number) => heads[i].at < heads[j].at;
  const swap = (i: number, j: number) => ([heads[i], heads[j]] = [heads[j], heads[i]]);
  const up = (i: number) => {
    for (let p = (i - 1) >> 1; i > 0 && less(i, p); i = p, p = (i - 1) >> 1) swap(i, p);
  };
  const down = (i: number) => {
    for (;;) {
      const [l, r] = [2 * i + 1, 2 * i + 2];
      let m = i;
      if (l < heads.length && less(l, m)) m = l;
      if (r < heads.length && less(r, m)) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  const firsts = await Promise.all(sources.map(async (s) => {
    const rest = s[Symbol.asyncIterator]();
    return { rest, next: await rest.next() };
  }));
  for (const { rest, next } of firsts) {
    if (next.done) continue;
    heads.push({ item: next.value, at: order(next.value), rest });
    up(heads.length - 1);
  }
  while (heads.length > 0) {
    const top = heads[0];
    yield top.item;
    const next = await top.rest.next();
    if (next.done) {
      const last = heads.pop()!;
      if (heads.length === 0) return;
      heads[0] = last;
    } else {
      heads[0] = { item: next.value, at: order(next.value), rest: top.rest };
    }
    down(0);
  }
}
