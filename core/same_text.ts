import { timingSafeEqual } from "node:crypto";

const enc = new TextEncoder();

/** Whether two secrets' texts are equal, compared in constant time (their lengths aside). */
export function sameText(a: string, b: string): boolean {
  const [x, y] = [enc.encode(a), enc.encode(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}
