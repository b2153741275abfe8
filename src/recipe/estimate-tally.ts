import { isLocalPath } from '../model-schemas/validate.js';
import type { Plan, PlannedStep } from '../plan.js';
import { type KnownItem, knownForEachItems, knownValue } from './known-values.js';

/** The fewest requests of a run, by kind. */
export interface RequestCounts {
  submissions: number;
  polls: number;
  uploads: number;
  tool_calls: number;
  text_calls: number;
  total: number;
  dynamic_steps: string[];
  /** Steps whose `if` is decided at run time: none of their requests are counted (they may not run). */
  conditional_steps?: string[];
}

/** Tasks per model slug; `dynamic` when a for_each list is known only at run time. */
export type TaskCounts = Record<string, number | 'dynamic'>;

/** Totals gathered step by step. */
export interface Tally {
  tasks: TaskCounts;
  requests: RequestCounts;
  localFiles: Set<string>;
  /** When each step's last run ends at the earliest, from the start. */
  finish: Map<string, number>;
  /** When each step's first run ends at the earliest: an item-by-item dependant can start then. */
  firstDone: Map<string, number>;
  taskTimeMs: number;
}

/** What an action's estimate is told of one step: its known runs (less those cached), and one run's expected time. */
export interface StepRuns {
  plan: Plan;
  /** Runs known at plan time that the cache will not answer. */
  known: number;
  /** Some row's run count is known only at run time. */
  dynamic: boolean;
  /** One run's expected time, in milliseconds. */
  eachMs: number;
}

export const isLocalFile = (value: unknown): value is string => typeof value === 'string' && isLocalPath(value);

/** A step's `with:` on one row as far as the plan knows it, or undefined when it is not an object. */
export function knownInputOf(
  step: PlannedStep,
  row: Record<string, unknown>,
  item?: KnownItem,
): Record<string, unknown> | undefined {
  if (!('with' in step)) return undefined;
  try {
    const value = knownValue(step.with, row, item);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The items of the step's `for_each` in this row, when the list is known before the run and has `runs` items. */
export function knownItems(step: PlannedStep, row: Record<string, unknown>, runs: number): KnownItem[] | undefined {
  // A list with an element known only at run time is priced as the step's runs are, not item by item.
  const items = knownForEachItems(step.forEach, row);
  return items?.length === runs ? items : undefined;
}
