/** "Did you mean …?" for a misspelt name, from the names that exist. */

/** The edit distance between two names (insertions, deletions, substitutions, swaps of neighbours). */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/** The known name closest to `name`, when it is close enough to be a slip of the keyboard. */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const d = candidate.toLowerCase() === lower ? 0 : distance(lower, candidate.toLowerCase());
    if (!best || d < best.distance) best = { name: candidate, distance: d };
  }
  // About one slip in three characters; a single letter can always be a typo of a longer name.
  const allowed = Math.max(1, Math.floor(name.length / 3));
  return best && best.distance <= allowed ? best.name : undefined;
}

/** `; did you mean 'shot'?`, or nothing when no known name is close. */
export function didYouMean(name: string, known: Iterable<string>): string {
  const closest = closestName(name, known);
  return closest === undefined ? '' : `; did you mean '${closest}'?`;
}
