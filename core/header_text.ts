/**
 * Text as a response header may carry it. Deno's HTTP writer ends the process on a header value
 * holding a control character (and `Headers` throws on NUL, CR and LF), so anything a request
 * carried is made safe before it reaches a header: every character outside printable ASCII, and
 * `%` itself, is percent-encoded as its UTF-8 bytes, as in a URL. `separators` are encoded too,
 * for a value that lists names (`X-Ignored-Fields` splits on commas).
 */
export function headerText(text: string, separators = ""): string {
  let out = "";
  for (const ch of text) {
    out += isPlain(ch) && !separators.includes(ch) ? ch : percentEncoded(ch);
  }
  return out;
}

/** Whether a header value would reach the wire as it is: no control character in it. */
export const isSafeHeaderValue = (value: string): boolean => {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return false;
  }
  return true;
};

const isPlain = (ch: string) => ch !== "%" && ch >= " " && ch <= "~";

const encoder = new TextEncoder();

const percentEncoded = (ch: string) =>
  [...encoder.encode(ch)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join(
    "",
  );
