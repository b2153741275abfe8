import type { Plan } from '../plan.js';
import { expectedMs, kindOf } from '../expected-durations.js';

const cache = new WeakMap<Plan, Map<string, number>>();

/**
 * Each step's priority for a task slot: the longest expected work from the step to the end of the
 * DAG, its own included ("highest level first"). A task that has the most still waiting behind it
 * goes first, so the long chains start early and the slots stay full to the end.
 */
export function taskPriority(plan: Plan, stepId: string): number {
  let levels = cache.get(plan);
  if (!levels) {
    levels = new Map();
    const dependants = new Map<string, string[]>();
    for (const step of plan.steps)
      for (const dep of step.dependsOn) dependants.set(dep, [...(dependants.get(dep) ?? []), step.id]);
    // Steps are in topological order, so walking them backwards sees every dependant first.
    for (const step of [...plan.steps].reverse()) {
      const after = Math.max(0, ...(dependants.get(step.id) ?? []).map((id) => levels!.get(id) ?? 0));
      levels.set(step.id, expectedMs(kindOf(step)) + after);
    }
    cache.set(plan, levels);
  }
  return levels.get(stepId) ?? 0;
}
