import type { Plan } from '../plan.js';
import { expectedMs, kindOf } from '../actions/durations.js';

const cache = new WeakMap<Plan, Map<string, number>>();

/**
 * Each step's priority for a task slot: the longest expected work from the step to the end of the
 * DAG, its own included ("highest level first"). A task that has the most still waiting behind it
 * goes first, so the long chains start early and the slots stay full to the end.
 *
 * Items that flow one by one (`badge[i] ← bg[i]`) are the exception: there, highest level first
 * would run every `bg` item before any `badge`, one kind of task at a time (a burst of short,
 * request-heavy images, then the long videos), which is the step barrier again. Each such step
 * goes just ahead of the step it flows from, so a chain that has begun is carried on before a new
 * one starts, and the slots hold a mix of short and long tasks all along.
 */
export function taskPriority(plan: Plan, stepId: string): number {
  let levels = cache.get(plan);
  if (!levels) {
    levels = highestLevelFirst(plan);
    if (plan.settings.itemFlow)
      // In topological order, so that a chain's upstream step has its final level first.
      for (const step of plan.steps) {
        const from = step.itemsFrom?.perItem ? step.itemsFrom.step : undefined;
        if (from !== undefined) levels.set(step.id, Math.max(levels.get(step.id)!, levels.get(from)! + 1));
      }
    cache.set(plan, levels);
  }
  return levels.get(stepId) ?? 0;
}

function highestLevelFirst(plan: Plan): Map<string, number> {
  const levels = new Map<string, number>();
  const dependants = new Map<string, string[]>();
  for (const step of plan.steps)
    for (const dep of step.dependsOn) dependants.set(dep, [...(dependants.get(dep) ?? []), step.id]);
  // Steps are in topological order, so walking them backwards sees every dependant first.
  for (const step of [...plan.steps].reverse()) {
    const after = Math.max(0, ...(dependants.get(step.id) ?? []).map((id) => levels.get(id) ?? 0));
    levels.set(step.id, expectedMs(kindOf(step)) + after);
  }
  return levels;
}
