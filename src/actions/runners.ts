/**
 * The engine's part of every action (src/actions/<kind>/run.ts), by kind: one line per action.
 * The type makes a missing kind a compile error.
 */
import type { ActionKind, StepOf } from '../plan.js';
import { llmRun } from './llm/run.js';
import { modelRun } from './model/run.js';
import { runRun } from './run/run.js';
import type { ActionRun } from './run-part.js';
import { uploadRun } from './upload/run.js';
import { webFetchRun } from './web-fetch/run.js';
import { webSearchRun } from './web-search/run.js';

export type ActionRuns = { readonly [K in ActionKind]: ActionRun<StepOf<K>> };

export const RUNNERS: ActionRuns = {
  'web-search': webSearchRun,
  'web-fetch': webFetchRun,
  llm: llmRun,
  upload: uploadRun,
  model: modelRun,
  run: runRun,
};

/** The engine's part of a step's action, typed for that step. */
export function runnerOf<K extends ActionKind>(step: StepOf<K>): ActionRun<StepOf<K>> {
  return RUNNERS[step.action as K];
}
