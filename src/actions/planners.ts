/**
 * The analyzer's part of every action (src/actions/<kind>/plan.ts), by kind: one line per action.
 * The type makes a missing kind a compile error.
 */
import type { ActionKind, StepOf } from '../plan.js';
import { llmPlan } from './llm/plan.js';
import { modelPlan } from './model/plan.js';
import type { ActionPlan } from './plan-part.js';
import { runPlan } from './run/plan.js';
import { uploadPlan } from './upload/plan.js';
import { webFetchPlan } from './web-fetch/plan.js';
import { webSearchPlan } from './web-search/plan.js';

export type ActionPlans = { readonly [K in ActionKind]: ActionPlan<StepOf<K>> };

/** In the order the error for an unknown `uses:` lists them. */
export const PLANNERS: ActionPlans = {
  'web-search': webSearchPlan,
  'web-fetch': webFetchPlan,
  llm: llmPlan,
  upload: uploadPlan,
  model: modelPlan,
  run: runPlan,
};

/** The analyzer's part of a step's action, typed for that step. */
export function plannerOf<K extends ActionKind>(step: StepOf<K>): ActionPlan<StepOf<K>> {
  return PLANNERS[step.action as K];
}

/** The action a step's `uses:` names (undefined: `run:`), or undefined when it names none. */
export function actionNamedBy(uses: string | undefined): ActionKind | undefined {
  return KINDS.find((kind) => PLANNERS[kind].claims(uses));
}

const KINDS = Object.keys(PLANNERS) as ActionKind[];

/** `web-search, web-fetch, llm, upload or a model slug provider/model_id`. */
export function usesChoices(): string {
  const names = Object.values(PLANNERS).flatMap((p) => (p.usesText ? [p.usesText] : []));
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : (names[0] ?? '');
}
