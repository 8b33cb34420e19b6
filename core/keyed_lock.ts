/** Runs `fn` with no other `fn` of the same name running in this process. */
export class KeyedLock {
  #tails = new Map<string, Promise<unknown>>();

  async run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(name) ?? Promise.resolve();
    const result = previous.then(fn, fn);
    const tail = result.catch(() => {});
    this.#tails.set(name, tail);
    try {
      return await result;
    } finally {
      if (this.#tails.get(name) === tail) this.#tails.delete(name);
    }
  }
}
