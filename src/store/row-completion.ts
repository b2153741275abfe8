/**
 * Which rows of a batch a resume has nothing left to do for, as the resume's fold reads the
 * journal: a row whose every step finished. Such a row's outputs, item outputs, downloads and step
 * records leave the fold as the row completes, so that resuming a batch of 100,000 rows holds the
 * rows still open, not every row's results. Only for a recipe without `outputs:`: a completed row
 * then needs none of its steps' outputs again (its later steps finished too, and no recipe output
 * reads them).
 */
export class RowCompletion {
  readonly complete: RowSet;
  private readonly open = new Map<number, OpenRow>();

  constructor(
    private readonly steps: readonly string[],
    rowCount: number,
  ) {
    this.complete = new RowSet(rowCount);
  }

  /** A finished item's key in the fold, to drop when its row completes. */
  itemFinished(row: number, key: string): void {
    this.openRow(row).items.push(key);
  }

  /** A downloaded file's URL (of a task of this row alone), to drop when its row completes. */
  fileDownloaded(row: number, url: string): void {
    this.openRow(row).urls.push(url);
  }

  /** The row's items and URLs when this step's end completes it; nothing while steps remain. */
  stepFinished(row: number, step: string): { items: string[]; urls: string[] } | undefined {
    const open = this.openRow(row);
    open.finished.add(step);
    if (open.finished.size < this.steps.length || this.steps.some((id) => !open.finished.has(id))) return undefined;
    this.open.delete(row);
    this.complete.add(row);
    return open;
  }

  get stepIds(): readonly string[] {
    return this.steps;
  }

  private openRow(row: number): OpenRow {
    let open = this.open.get(row);
    if (!open) {
      open = { finished: new Set(), items: [], urls: [] };
      this.open.set(row, open);
    }
    return open;
  }
}

interface OpenRow {
  finished: Set<string>;
  items: string[];
  urls: string[];
}

/** A set of row numbers below a known count, a bit a row: a million rows in 125 KB. */
export class RowSet {
  private readonly bits: Uint8Array;
  private count = 0;

  constructor(private readonly rowCount: number) {
    this.bits = new Uint8Array(Math.ceil(Math.max(0, rowCount) / 8));
  }

  has(row: number): boolean {
    return Number.isInteger(row) && row >= 0 && row < this.rowCount && (this.bits[row >> 3]! & (1 << (row & 7))) !== 0;
  }

  add(row: number): void {
    if (!Number.isInteger(row) || row < 0 || row >= this.rowCount || this.has(row)) return;
    this.bits[row >> 3]! |= 1 << (row & 7);
    this.count++;
  }

  get size(): number {
    return this.count;
  }
}
