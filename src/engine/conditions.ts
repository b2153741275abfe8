/**
 * GitHub Actions' rules for `if`: the status functions see the steps a step comes after, and an
 * `if` that calls none of them means `success() && …`. A step's `outcome` is how it ended; its
 * `conclusion` is the same, except that a failure with continue_on_error concludes `success`.
 */
import { callsStatus, type StepConclusion } from '../expressions/expressions.js';
import type { Plan, PlannedStep, ValueTemplate } from '../plan.js';

/** As much of a step's outcome as the rules read. */
interface StepOutcome {
  status: 'succeeded' | 'failed' | 'skipped' | 'cancelled';
}

function templateCallsStatus(value: ValueTemplate): boolean {
  if (value.kind !== 'template') return false;
  return value.template.parts.some((part) => typeof part !== 'string' && callsStatus(part.expr));
}

/** Whether the step's `if` reads the other steps' states itself, and so runs after failures when it says so. */
export const readsStatus = (step: PlannedStep): boolean => step.if !== undefined && templateCallsStatus(step.if);

const OUTCOMES: Record<StepOutcome['status'], StepConclusion> = {
  succeeded: 'success',
  failed: 'failure',
  skipped: 'skipped',
  cancelled: 'cancelled',
};

/** `steps.ID.outcome` and `steps.ID.conclusion` of a step that ended. */
export function conclusionOf(
  outcome: StepOutcome,
  step: PlannedStep | undefined,
): { outcome: StepConclusion; conclusion: StepConclusion } {
  const plain = OUTCOMES[outcome.status];
  return { outcome: plain, conclusion: plain === 'failure' && step?.continueOnError ? 'success' : plain };
}

/** Every step that `id` waits for, directly or through others. */
export function ancestorsOf(plan: Plan, id: string): string[] {
  const byId = new Map(plan.steps.map((step) => [step.id as string, step]));
  const seen = new Set<string>();
  const stack = [...(byId.get(id)?.dependsOn ?? [])];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(byId.get(next)?.dependsOn ?? []));
  }
  return [...seen];
}

/** What failure() and cancelled() say, from how the steps before this one concluded. */
export function statusAfter(
  plan: Plan,
  ended: ReadonlyArray<readonly [string, StepOutcome]>,
): { failure: boolean; cancelled: boolean } {
  const byId = new Map(plan.steps.map((step) => [step.id as string, step]));
  const conclusions = ended.map(([id, outcome]) => conclusionOf(outcome, byId.get(id)).conclusion);
  return { failure: conclusions.includes('failure'), cancelled: conclusions.includes('cancelled') };
}
