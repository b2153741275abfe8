/** "Did you mean …?" for a misspelt name, from the names that exist. */

/** A name longer than this gets no suggestion: it is no slip of the keyboard, and comparing it would cost its square. */
const LONGEST_SUGGESTED = 64;

/**
 * Work a suggester may spend, in cells of the edit-distance table, per name it knows (plus a
 * floor): so the work of every suggestion in a recipe stays proportional to the recipe's size,
 * however many unknown names meet however many known ones. Past it, names get no suggestion.
 */
const CELLS_PER_KNOWN_NAME = 1024;
const CELLS_FLOOR = 1024 * 1024;

/**
 * The edit distance between two names (insertions, deletions, substitutions, swaps of neighbours)
 * when it is at most `limit`, else any number above `limit`. The cells computed are added to `work`.
 */
function boundedDistance(a: string, b: string, limit: number, work: { cells: number }): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before = new Int32Array(b.length + 1);
  let previous = Int32Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowBest = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      current[j] = best;
      if (best < rowBest) rowBest = best;
    }
    work.cells += b.length;
    // Every later row is at least this row's best: no path back under the limit.
    if (rowBest > limit) return limit + 1;
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length]!;
}

/**
 * Suggestions against one set of known names, for any number of unknown ones: each name is judged
 * once, candidates too far off in length are skipped, a comparison stops once it cannot come
 * close enough, and the whole stays within a work budget proportional to the names known.
 */
export class NameSuggester {
  private readonly known: string[];
  private tables: { names: Array<{ name: string; lower: string }>; byLower: Map<string, string[]> } | undefined;
  private readonly judged = new Map<string, string | undefined>();
  private readonly work = { cells: 0 };
  private readonly budget: number;

  constructor(known: Iterable<string>) {
    this.known = Array.from(known);
    this.budget = CELLS_FLOOR + CELLS_PER_KNOWN_NAME * this.known.length;
  }

  /** The names in lower case, built when first asked: a valid recipe of 100,000 steps never asks. */
  private get names(): Array<{ name: string; lower: string }> {
    return this.built().names;
  }

  private get byLower(): Map<string, string[]> {
    return this.built().byLower;
  }

  private built() {
    if (!this.tables) {
      const names = this.known.map((name) => ({ name, lower: name.toLowerCase() }));
      const byLower = new Map<string, string[]>();
      for (const { name, lower } of names) {
        const same = byLower.get(lower);
        if (same) same.push(name);
        else byLower.set(lower, [name]);
      }
      this.tables = { names, byLower };
    }
    return this.tables;
  }

  /** The known name closest to `name` (other than `except`), when it is close enough to be a slip of the keyboard. */
  closest(name: string, except?: string): string | undefined {
    const key = `${except ?? ''}\u0000${name}`;
    if (this.judged.has(key)) return this.judged.get(key);
    const found = this.search(name, except);
    this.judged.set(key, found);
    return found;
  }

  /** How many names it knows, `except` left out. */
  count(except?: string): number {
    return (
      this.known.length - (except !== undefined && this.byLower.get(except.toLowerCase())?.includes(except) ? 1 : 0)
    );
  }

  /**
   * `a, b, c`, or the first `shown` and `and 980 more`: the names but `except`, for a message that
   * must not grow with the size of the recipe.
   */
  list(except?: string, shown = 20): string {
    const first: string[] = [];
    for (const name of this.known) {
      if (first.length === shown) break;
      if (name !== except) first.push(name);
    }
    const more = this.count(except) - first.length;
    return `${first.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
  }

  /** `; did you mean 'shot'?`, or nothing when no known name is close. */
  hint(name: string, except?: string): string {
    const closest = this.closest(name, except);
    return closest === undefined ? '' : `; did you mean '${closest}'?`;
  }

  private search(name: string, except: string | undefined): string | undefined {
    const lower = name.toLowerCase();
    const sameButCase = this.byLower.get(lower)?.find((known) => known !== except);
    if (sameButCase !== undefined) return sameButCase;
    if (name.length > LONGEST_SUGGESTED) return undefined;
    // About one slip in three characters; a single letter can always be a typo of a longer name.
    const allowed = Math.max(1, Math.floor(name.length / 3));
    let best: { name: string; distance: number } | undefined;
    for (const candidate of this.names) {
      if (candidate.name === except) continue;
      // Even a candidate skipped for its length counts, so that many unknown names stay linear too.
      if (++this.work.cells > this.budget) break;
      // Only a strictly closer name replaces the first one found, as the names come in order.
      const limit = best ? best.distance - 1 : allowed;
      const d = boundedDistance(lower, candidate.lower, limit, this.work);
      if (d <= limit) best = { name: candidate.name, distance: d };
      if (best?.distance === 1) break;
    }
    return best?.name;
  }
}

/** The known name closest to `name`, when it is close enough to be a slip of the keyboard. */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  return new NameSuggester(known).closest(name);
}

/** `; did you mean 'shot'?`, or nothing when no known name is close. */
export function didYouMean(name: string, known: Iterable<string>): string {
  return new NameSuggester(known).hint(name);
}
