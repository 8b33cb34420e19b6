/**
 * Deno KV keys and values as JSON, for the export file (docs/export-format.md): JSON's own types
 * as they are, and the rest tagged by a one-key object: `{"$u64": "12"}` (Deno.KvU64),
 * `{"$bigint": "12"}`, `{"$bytes": "<base64>"}`, `{"$date": "<ISO>"}`. A stored object whose
 * keys start with `$` is wrapped as `{"$object": {...}}`, so no stored value reads as a tag.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function encode(value: unknown): Json {
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return { $bigint: value.toString() };
  if (value instanceof Deno.KvU64) return { $u64: value.value.toString() };
  if (value instanceof Uint8Array) return { $bytes: value.toBase64() };
  if (value instanceof Date) return { $date: value.toISOString() };
  if (Array.isArray(value)) return value.map(encode);
  if (typeof value === "object") {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = encode(v);
    return Object.keys(out).some((k) => k.startsWith("$")) ? { $object: out } : out;
  }
  throw new Error(`can't export a value of type ${typeof value}`);
}

export function decode(json: Json): unknown {
  if (json === null || typeof json !== "object") return json;
  if (Array.isArray(json)) return json.map(decode);
  const [tag, ...rest] = Object.keys(json);
  if (rest.length === 0 && tag?.startsWith("$")) {
    const inner = json[tag];
    switch (tag) {
      case "$u64":
        return new Deno.KvU64(BigInt(inner as string));
      case "$bigint":
        return BigInt(inner as string);
      case "$bytes":
        return Uint8Array.fromBase64(inner as string);
      case "$date":
        return new Date(inner as string);
      case "$object":
        return decodeFields(inner as { [key: string]: Json });
    }
    throw new Error(`unknown tag ${tag}`);
  }
  return decodeFields(json);
}

const decodeFields = (json: { [key: string]: Json }) =>
  Object.fromEntries(Object.entries(json).map(([k, v]) => [k, decode(v)]));

export const encodeKey = (key: Deno.KvKey): Json => key.map(encode);

export function decodeKey(json: Json): Deno.KvKey {
  if (!Array.isArray(json)) throw new Error("a key must be an array");
  return json.map(decode) as Deno.KvKey;
}
