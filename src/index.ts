// media-pipeline as a library: run a recipe from a Node script, without the command line.
export type { Clock } from './clock.js';
export type { Reporter } from './engine/reporter.js';
export type { GatewayFailure } from './gateway/failures.js';
export type { Result } from './result.js';
export type { GatewayOptions } from './session/connection.js';
export type { CacheOptions, RpmOption, RunOptions, RunTraffic } from './session/options.js';
export {
  checkRunOptions,
  type RecipeProblem,
  type RecipeRunOptions,
  resumeRecipe,
  type RunFailure,
  type RunOutcome,
  runRecipe,
} from './session/run-recipe.js';
export type { RunCost, StepSummary } from './store/summary.js';
