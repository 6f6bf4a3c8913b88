/**
 * The known word a misspelt one most likely meant, for "did you mean"
 * hints: the closest by edit distance (insertions, deletions, substitutions
 * and swaps of neighbours), when it is close enough to be a typo (at most a
 * third of the word, and at most 3 edits). Words are short command names
 * and flags; the table is the product of their lengths.
 */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i] ?? [];
      const above = rows[i - 1] ?? [];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((above[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (above[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      row[j] = best;
    }
  }
  return rows[a.length]?.[b.length] ?? 0;
}

/** Words longer than this are not compared: a hint for a typo, not for pasted text. */
const LONGEST = 64;

export function closestWord(word: string, known: readonly string[]): string | undefined {
  if (word.length > LONGEST) return undefined;
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: { word: string; distance: number } | undefined;
  for (const candidate of known) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d <= limit && (best === undefined || d < best.distance)) best = { word: candidate, distance: d };
  }
  return best?.word;
}

/** ` (did you mean X?)` when one is close, else nothing. */
export function didYouMean(word: string, known: readonly string[]): string {
  const close = closestWord(word, known);
  return close === undefined ? '' : ` (did you mean ${close}?)`;
}
