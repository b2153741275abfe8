import type { InputRows } from '../plan.js';

type Row = Record<string, unknown>;

/** The first buffer's size; each next one twice the last, up to `LAST_CHUNK`. */
const FIRST_CHUNK = 16 * 1024;
const LAST_CHUNK = 1024 * 1024;
/** Rows a page of the index holds: three 32-bit numbers a row (its buffer, where it starts and ends). */
const PAGE_ROWS = 4096;

/**
 * A batch's rows as JSON text in a few buffers and an index of where each row is, not as an object
 * a row: a million small objects and their strings cost about a hundred bytes a row of the heap;
 * this costs the row's JSON and twelve bytes, outside the heap. Neither the buffers nor the index
 * is ever copied to grow (each is a list of fixed pieces), so reading a million rows leaves no
 * garbage the size of the table. A row is made again when it is asked for (`at`, or in order by
 * iterating), as a new object each time: the defaults first, then the row's own values, then the
 * `--set` overrides, in the key order the analysis first made it in.
 */
export class RowTable implements InputRows {
  readonly batch = true;
  private readonly chunks: Buffer[] = [];
  /** Bytes used of the last buffer. */
  private used = 0;
  private readonly pages: Uint32Array[] = [];
  private count = 0;
  /** Rows JSON would change (a number it cannot write, such as −0 or one too large): kept as they are. */
  private readonly verbatim = new Map<number, Row>();

  /** No defaults nor overrides: a row is its own values. */
  private readonly plain: boolean;

  constructor(
    private readonly defaults: Row,
    private readonly overrides: Row,
  ) {
    this.plain = Object.keys(defaults).length === 0 && Object.keys(overrides).length === 0;
  }

  get length(): number {
    return this.count;
  }

  /** Adds a row by its own values (without the defaults and overrides the table adds to each). */
  push(values: Row): void {
    if (!writesAsJson(values)) {
      this.verbatim.set(this.count, values);
      this.append('{}');
    } else this.append(JSON.stringify(values));
  }

  at(index: number): Row | undefined {
    const i = index < 0 ? index + this.count : index;
    if (!Number.isInteger(i) || i < 0 || i >= this.count) return undefined;
    const values = this.verbatim.get(i) ?? (JSON.parse(this.textOf(i)) as Row);
    // JSON.parse made a new object: with nothing to add, it is the row.
    return this.plain && !this.verbatim.has(i) ? values : { ...this.defaults, ...values, ...this.overrides };
  }

  *[Symbol.iterator](): IterableIterator<Row> {
    for (let i = 0; i < this.count; i++) yield this.at(i)!;
  }

  *entries(): IterableIterator<[number, Row]> {
    for (let i = 0; i < this.count; i++) yield [i, this.at(i)!];
  }

  /** Forgets every row. */
  clear(): void {
    this.chunks.length = 0;
    this.pages.length = 0;
    this.used = 0;
    this.count = 0;
    this.verbatim.clear();
  }

  /** The same rows but those at `left`'s indices, copied as they are stored (no row is made again). */
  without(left: ReadonlySet<number>): RowTable {
    const kept = new RowTable(this.defaults, this.overrides);
    for (let i = 0; i < this.count; i++) {
      if (left.has(i)) continue;
      const verbatim = this.verbatim.get(i);
      if (verbatim) kept.verbatim.set(kept.count, verbatim);
      kept.append(this.textOf(i));
    }
    return kept.trimmed();
  }

  /** The table without the room its last buffer has left: called once the last row is in. */
  trimmed(): this {
    const last = this.chunks.at(-1);
    if (last && this.used < last.length) this.chunks[this.chunks.length - 1] = Buffer.from(last.subarray(0, this.used));
    return this;
  }

  /** Row i's JSON, decoded from its buffer without a view of it in between. */
  private textOf(i: number): string {
    const page = this.pages[Math.floor(i / PAGE_ROWS)]!;
    const at = 3 * (i % PAGE_ROWS);
    return this.chunks[page[at]!]!.toString('utf8', page[at + 1]!, page[at + 2]!);
  }

  private append(text: string): void {
    this.reserve(Buffer.byteLength(text));
    const start = this.used;
    this.used += this.chunks.at(-1)!.write(text, start, 'utf8');
    this.indexRow(start);
  }

  /** Room for `size` more bytes in the last buffer: a new buffer when it has not (a row is never split). */
  private reserve(size: number): void {
    const last = this.chunks.at(-1);
    if (last && this.used + size <= last.length) return;
    const next = last ? Math.min(LAST_CHUNK, 2 * last.length) : FIRST_CHUNK;
    this.chunks.push(Buffer.allocUnsafeSlow(Math.max(size, next)));
    this.used = 0;
  }

  /** Records that the row just written into the last buffer starts at `start` and ends where it is used up to. */
  private indexRow(start: number): void {
    const slot = this.count % PAGE_ROWS;
    if (slot === 0) this.pages.push(new Uint32Array(3 * PAGE_ROWS));
    const page = this.pages.at(-1)!;
    page[3 * slot] = this.chunks.length - 1;
    page[3 * slot + 1] = start;
    page[3 * slot + 2] = this.used;
    this.count++;
  }
}

/**
 * Whether a row's own values come back the same from JSON. They come from CSV cells read as their
 * types, or from a JSONL line's JSON: a number is the one value JSON may not write as itself (−0,
 * or a long string of digits read as an integer, which is Infinity). Within a list or an object,
 * which JSON gave, only a zero's sign can be lost, and no input reads it.
 */
function writesAsJson(values: Row): boolean {
  for (const key in values) {
    const value = values[key];
    if (typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0))) return false;
  }
  return true;
}
