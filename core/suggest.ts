/** The closest of `known` to what was typed, for "did you mean ...?"; null when none is close. */
export function closest(typed: string, known: Iterable<string>): string | null {
  // Close means a slip: a letter or two, or a third of a short name.
  const near = Math.max(2, Math.floor(typed.length / 3));
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const name of known) {
    // Names whose lengths differ by more can't be near: skipped unmeasured, so a long hostile
    // input costs no quadratic work.
    if (Math.abs(name.length - typed.length) > near) continue;
    const d = distance(typed, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return bestDistance <= near ? best : null;
}

/** Levenshtein's edit distance. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + cost);
    }
    row = next;
  }
  return row[b.length];
}

/** " Did you mean X?" when something is close, else "". */
export const didYouMean = (typed: string, known: Iterable<string>, prefix = "") => {
  const near = closest(typed, known);
  return near ? ` Did you mean ${prefix}${near}?` : "";
};
