/**
 * First guesses of how long one run of each kind of step takes, before the run has measured
 * anything: each action's own (its `duration.ts`), gathered here. The planner's wall-time bound,
 * the engine's task priorities and the poller's first poll all start from them.
 */
import type { ActionKind, StepOf } from '../plan.js';
import type { ActionDuration } from './duration-part.js';
import { llmDuration } from './llm/duration.js';
import { modelDuration } from './model/duration.js';
import { runDuration } from './run/duration.js';
import { uploadDuration } from './upload/duration.js';
import { webFetchDuration } from './web-fetch/duration.js';
import { webSearchDuration } from './web-search/duration.js';

export type ActionDurations = { readonly [K in ActionKind]: ActionDuration<StepOf<K>> };

/** Each action's expected durations, by kind: one line per action. */
export const DURATIONS: ActionDurations = {
  'web-search': webSearchDuration,
  'web-fetch': webFetchDuration,
  llm: llmDuration,
  upload: uploadDuration,
  model: modelDuration,
  run: runDuration,
};

/** A kind no action names (a model type the gateway added since): a slow model's time, to poll patiently. */
const UNKNOWN_KIND_MS = 30_000;

export const EXPECTED_MS: Readonly<Record<string, number>> = Object.assign(
  {},
  ...Object.values(DURATIONS).map((d) => d.expected),
);

export const expectedMs = (kind: string): number => EXPECTED_MS[kind] ?? UNKNOWN_KIND_MS;

/** The kind a step's time is expected by. */
export function kindOf<K extends ActionKind>(step: StepOf<K>): string {
  const duration: ActionDuration<StepOf<K>> = DURATIONS[step.action as K];
  return duration.kindOf(step);
}
