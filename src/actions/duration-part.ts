import type { PlannedStep } from '../plan.js';

/** An action's expected durations: the base layer of its module, which both the analyzer and the engine read. */
export interface ActionDuration<S extends PlannedStep> {
  /** The kinds its steps' times are expected by, with the first guess for each, in milliseconds. */
  expected: Readonly<Record<string, number>>;
  /** The kind one step's time is expected by: a model's type, else the action. */
  kindOf(step: S): string;
}
