/**
 * How each item of a for_each step ended, as soon as it ended: what an item-by-item step downstream
 * waits on (`badge[i]` waits for `bg[i]` alone). A success is told at once; a failure only once
 * the step gave up on the item (after its retries), so a descendant never runs on a failure that
 * a retry would have mended.
 */
import type { StepConclusion } from '../expressions/expressions.js';

/** How the items an item descends from ended, by step, its own included: what its `if` reads. */
export type Lineage = Readonly<Record<string, { outcome: StepConclusion; conclusion: StepConclusion }>>;

export type ItemEnd =
  | { status: 'succeeded'; outputs: unknown; lineage: Lineage }
  /** `cause`: the item the trouble began with and what happened to it, as `bg[1] failed`. */
  | { status: 'failed' | 'skipped' | 'cancelled'; cause: string; lineage: Lineage };

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  settled: boolean;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  const d: Deferred<T> = {
    promise,
    resolve: (value) => {
      if (d.settled) return;
      d.settled = true;
      resolve(value);
    },
    settled: false,
  };
  return d;
}

export class ItemFeed {
  private readonly counted = deferred<number | undefined>();
  private ends: Array<Deferred<ItemEnd>> = [];

  /** The number of items, once the step knows its list; undefined when it ended without one. */
  count(): Promise<number | undefined> {
    return this.counted.promise;
  }

  setCount(count: number): void {
    if (this.counted.settled) return;
    this.ends = Array.from({ length: count }, () => deferred<ItemEnd>());
    this.counted.resolve(count);
  }

  /** How item `index` ended; the first word on an item stands. */
  end(index: number, end: ItemEnd): void {
    this.ends[index]?.resolve(end);
  }

  item(index: number): Promise<ItemEnd> {
    const end = this.ends[index];
    if (!end) throw new Error(`Internal error: item ${index} of a feed with ${this.ends.length} items`);
    return end.promise;
  }

  /**
   * The step ended: items not told yet end as `unsettled` says (failed, with the step's failure,
   * or cancelled), and a step that never had a list has none.
   */
  close(unsettled: (index: number) => ItemEnd): void {
    this.counted.resolve(undefined);
    for (const [index, end] of this.ends.entries()) if (!end.settled) end.resolve(unsettled(index));
  }
}
