/**
 * Tables keyed by outside data (a block's id, a field's name, a header's): a name every plain
 * object inherits (`constructor`, `__proto__`, `toString`) is as unknown there as any other,
 * never a way to read or write `Object` itself. Where a table becomes JSON, it is an object with
 * no prototype; anywhere else, a `Map`.
 */

/** An empty object with no prototype, to fill by outside names and send as JSON. */
export const table = <T>(): Record<string, T> => Object.create(null);

/** The value `key` names in `t` itself, never one it inherits. */
export const own = <T>(t: Record<string, T> | undefined, key: string): T | undefined =>
  t !== undefined && Object.hasOwn(t, key) ? t[key] : undefined;
