/**
 * How an item is named wherever a user reads it (console, journal reasons, report, `runs show`):
 * `hero` for a step without `for_each`, `hero[2]` for its third item, and `row 3 hero[2]` when a
 * batch has several rows. The one place that spells the format.
 */
export interface ItemRef {
  step: string;
  /** The item's index; absent for a step that has no `for_each`. */
  index?: number | undefined;
  /** The batch row, counted from 0; named only when `rows` > 1. */
  row?: number | undefined;
}

export function itemLabel({ step, index, row }: ItemRef, rows = 1): string {
  const where = rows > 1 && row !== undefined ? `row ${row + 1} ` : '';
  return `${where}${step}${index === undefined ? '' : `[${index}]`}`;
}
