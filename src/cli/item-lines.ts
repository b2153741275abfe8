import type { StepSummary } from '../store/summary.js';
import { itemLabel } from '../item-label.js';

const itemName = (step: StepSummary, index: number, rows: number) =>
  itemLabel({ step: step.step, index, row: step.row }, rows);

/**
 * The items that failed, each with its message, and the items that did not run, grouped by the
 * item their trouble began with: `skipped because t2i[3] failed: edit[3], v2v[3]`.
 */
export function describeItems(steps: StepSummary[], rows: number): string[] {
  const lines: string[] = [];
  for (const step of steps)
    for (const failed of step.failed_items ?? [])
      lines.push(`✗ ${itemName(step, failed.index, rows)} failed: ${failed.message}`);
  const byReason = new Map<string, string[]>();
  for (const step of steps)
    for (const skipped of step.skipped_items ?? [])
      byReason.set(skipped.reason, [...(byReason.get(skipped.reason) ?? []), itemName(step, skipped.index, rows)]);
  for (const [reason, items] of byReason) {
    const because = reason === 'its condition is false' ? 'their condition was false' : reason;
    lines.push(`– skipped because ${because}: ${items.join(', ')}`);
  }
  return lines;
}
