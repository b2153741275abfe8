import type { PlanEstimate } from './estimate.js';

/**
 * Whether item i of the step needs item i of `dep` alone: the step it flows from, or an ancestor
 * whose outcome its `if` reads per item. Apart from the estimate, so that printing a plan's NEEDS
 * column does not load it.
 */
export function isPerItemDependency(step: PlanEstimate['steps'][number], dep: string): boolean {
  const from = step.items_from;
  return Boolean(from?.per_item && (from.step === dep || from.ancestors_per_item?.includes(dep)));
}
