import type { StepSummary } from '../store/summary.js';
import { itemLabel } from '../item-label.js';

/** A message's later lines (a command's stderr), indented under the line that names the item. */
export const continued = (message: string): string => message.replaceAll('\n', '\n    ');

const itemName = (step: StepSummary, index: number, rows: number) =>
  itemLabel({ step: step.step, index, row: step.row }, rows);

/**
 * The items that failed, each with its message, and the items that did not run, grouped by the
 * item their trouble began with: `skipped because t2i[3] failed: edit[3], v2v[3]`.
 */
export function describeItems(steps: StepSummary[], rows: number): string[] {
  const lines: string[] = [];
  // Items that failed for the same reason, told once: a spending cap stops every item left alike.
  const byMessage = new Map<string, { names: string[]; message: string }>();
  for (const step of steps)
    for (const failed of step.failed_items ?? []) {
      const name = itemName(step, failed.index, rows);
      const own = failed.message.startsWith(`${name} `) ? failed.message.slice(name.length + 1) : undefined;
      const key = own ?? `${name}\u0000${failed.message}`;
      const group = byMessage.get(key) ?? { names: [], message: failed.message };
      group.names.push(name);
      byMessage.set(key, group);
    }
  for (const [key, { names, message }] of byMessage) {
    if (names.length === 1) lines.push(`✗ ${names[0]} failed: ${continued(message)}`);
    else lines.push(`✗ ${names.join(', ')} failed, each: ${continued(key)}`);
  }
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
