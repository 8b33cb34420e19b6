/**
 * Uint8Array's base64 and hex methods, which the runtime of every Deno we run on has (V8 14,
 * Deno 2.5 on Deno Deploy included) but whose declarations came only with TypeScript 6 (Deno
 * 2.6+). Declared here so the older Deno type-checks the same code; on newer ones these merge
 * with the built-in declarations.
 */
interface Uint8Array<TArrayBuffer extends ArrayBufferLike = ArrayBufferLike> {
  toHex(): string;
  toBase64(options?: { alphabet?: "base64" | "base64url"; omitPadding?: boolean }): string;
}

interface Uint8ArrayConstructor {
  fromBase64(
    string: string,
    options?: {
      alphabet?: "base64" | "base64url";
      lastChunkHandling?: "loose" | "strict" | "stop-before-partial";
    },
  ): Uint8Array<ArrayBuffer>;
}
