import type { Plan, PlannedStep } from '../plan.js';
import { expectedMs, kindOf } from '../actions/durations.js';

/** A step's priority, and its items' where steps downstream read only some of them. */
interface StepPriority {
  /** The step's: its most urgent item's. */
  level: number;
  /** Priorities by item index, for the items chosen by a step downstream (`branded ← hero[0]`). */
  chosen?: Map<number, number>;
  /** The priority of the items no step downstream chooses, when some are chosen. */
  unchosen?: number;
  /** No item goes below this: just ahead of the step its items flow from. */
  floor?: number;
}

const cache = new WeakMap<Plan, Map<string, StepPriority>>();

/**
 * The priority of a task of step `stepId` (item `index` of a for_each step) for a task slot: the
 * longest expected work from it to the end of the DAG, its own included ("highest level first").
 * A task that has the most still waiting behind it goes first, so the long chains start early and
 * the slots stay full to the end.
 *
 * Items that flow one by one (`badge[i] ← bg[i]`) are the exception: there, highest level first
 * would run every `bg` item before any `badge`, one kind of task at a time (a burst of short,
 * request-heavy images, then the long videos), which is the step barrier again. Each such step
 * goes just ahead of the step it flows from, so a chain that has begun is carried on before a new
 * one starts, and the slots hold a mix of short and long tasks all along.
 *
 * Where a step downstream reads chosen items only (`branded ← hero[0]`), only those items have its
 * work behind them: the others have their own time alone, and go after the chains, filling the
 * slots between and after the long tasks rather than holding them up.
 */
export function taskPriority(plan: Plan, stepId: string, index?: number): number {
  let priorities = cache.get(plan);
  if (!priorities) {
    priorities = highestLevelFirst(plan);
    if (plan.settings.itemFlow)
      // In topological order, so that a chain's upstream step has its final level first.
      for (const step of plan.steps) {
        const from = step.itemsFrom?.perItem ? step.itemsFrom.step : undefined;
        if (from !== undefined) {
          const own = priorities.get(step.id)!;
          own.floor = priorities.get(from)!.level + 1;
          own.level = Math.max(own.level, own.floor);
        }
      }
    cache.set(plan, priorities);
  }
  const priority = priorities.get(stepId);
  if (!priority) return 0;
  if (index === undefined || priority.unchosen === undefined) return priority.level;
  return Math.max(priority.chosen?.get(index) ?? priority.unchosen, priority.floor ?? 0);
}

function highestLevelFirst(plan: Plan): Map<string, StepPriority> {
  const priorities = new Map<string, StepPriority>();
  const dependants = new Map<string, PlannedStep[]>();
  for (const step of plan.steps)
    for (const dep of step.dependsOn) {
      const list = dependants.get(dep);
      if (list) list.push(step);
      else dependants.set(dep, [step]);
    }
  // Steps are in topological order, so walking them backwards sees every dependant first.
  for (const step of [...plan.steps].reverse()) {
    const own = expectedMs(kindOf(step));
    let whole = 0;
    const chosen = new Map<number, number>();
    for (const dependant of dependants.get(step.id) ?? []) {
      const after = priorities.get(dependant.id)?.level ?? 0;
      const reads = dependant.chosenItems?.find((c) => c.step === step.id);
      if (!reads) whole = Math.max(whole, after);
      else for (const index of reads.indices) chosen.set(index, Math.max(chosen.get(index) ?? 0, after));
    }
    const level = own + Math.max(whole, ...chosen.values());
    if (chosen.size === 0) priorities.set(step.id, { level });
    else
      priorities.set(step.id, {
        level,
        chosen: new Map([...chosen].map(([index, after]) => [index, own + Math.max(whole, after)])),
        unchosen: own + whole,
      });
  }
  return priorities;
}
