/**
 * How an item is named wherever a user reads it (console, journal reasons, report, `runs show`):
 * `hero` for a step without `for_each`, `hero[2]` for its third item, and `row 3 hero[2]` when a
 * batch has several rows. The one place that spells the format: everything else carries the parts
 * as data (an `ItemRef`) and never reads a label back into them.
 */
export interface ItemRef {
  step: string;
  /** The item's index; absent for a step that has no `for_each`. */
  index?: number | undefined;
  /** The batch row, counted from 0; named only when `rows` > 1. */
  row?: number | undefined;
}

/** A step of a running plan, in its batch row. */
export interface StepRef {
  step: string;
  row: number;
}

/** An item of a running plan: its row is always known; `index` is absent for a step without `for_each`. */
export interface RunItemRef extends StepRef {
  index?: number | undefined;
}

export function itemLabel({ step, index, row }: ItemRef, rows = 1): string {
  const where = rows > 1 && row !== undefined ? `row ${row + 1} ` : '';
  return `${where}${step}${index === undefined ? '' : `[${index}]`}`;
}

/** Chosen items of one step, as `plan` names them: `hero[0]`, or `bg[0], bg[2]`. */
export const chosenItemsLabel = (step: string, indices: readonly number[]): string =>
  indices.map((index) => itemLabel({ step, index })).join(', ');

/** The item's step, in the same row: `hero[2]` belongs to `hero`, `row 2 hero[0]` to `row 2 hero`. */
export const stepOf = ({ step, row }: RunItemRef): StepRef => ({ step, row });

/** The index the journal keeps: the one item of a step without `for_each` is item 0. */
export const journalIndex = (item: RunItemRef): number => item.index ?? 0;
