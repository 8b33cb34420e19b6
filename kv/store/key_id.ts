/**
 * A key as text, for maps and sets of keys in memory (never stored): each part tagged by its type
 * and strings by their length, so no two keys share one. Reads name keys by the thousand, so this
 * is built by hand: JSON.stringify with a replacer for bigints cost ten times as much.
 */
export function keyId(key: Deno.KvKey): string {
  let id = "";
  for (const part of key) {
    if (typeof part === "string") id += `${part.length}:${part}`;
    else if (typeof part === "number") id += `n${part};`;
    else if (typeof part === "bigint") id += `b${part};`;
    else if (typeof part === "boolean") id += part ? "t" : "f";
    else if (part instanceof Uint8Array) id += `u${part.toHex()};`;
    else id += `y${String(part)};`;
  }
  return id;
}
