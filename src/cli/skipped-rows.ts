import type { Plan } from '../plan.js';
import { UsageError } from './errors.js';
import { plural } from '../format.js';

export const SKIP_INVALID_ROWS_HELP =
  'with --batch: leave out the rows the recipe can judge invalid before running ' +
  '(input types, model schemas) and list them';

/** `--skip-invalid-rows` means something only for the rows of `--batch`. */
export function checkSkipInvalidRows(flags: { batch?: string; skipInvalidRows?: boolean }): void {
  if (flags.skipInvalidRows && !flags.batch) throw new UsageError('--skip-invalid-rows goes with --batch');
}

/** The analyzer's options for the rows: the batch file and whether bad rows are left out. */
export const rowOptions = (flags: { set?: string[]; batch?: string; skipInvalidRows?: boolean }) => ({
  set: flags.set ?? [],
  ...(flags.batch ? { batch: flags.batch } : {}),
  ...(flags.skipInvalidRows ? { skipInvalidRows: true } : {}),
});

/** Distinct rows among the problems: each problem stands at the start of its row. */
export const skippedRowCount = (plan: Plan) => new Set((plan.skippedRows ?? []).map((s) => s.where)).size;

/** The rows left out as warnings: how many, then each problem at its row; nothing when none was. */
export function skippedRowsWarning(plan: Plan): string | undefined {
  const skipped = plan.skippedRows ?? [];
  if (skipped.length === 0) return undefined;
  const rows = skippedRowCount(plan);
  const heading = `--skip-invalid-rows: ${plural(rows, 'row')} left out, ${plan.rows.length} kept:`;
  return [heading, ...skipped.map((s) => `  ${s.where}: warning: ${s.message}`)].join('\n');
}
