import type { JsonSchema } from '../model-schemas/bundled.js';
import type { Plan } from '../plan.js';
import type { AnalyzerDeps } from '../recipe/analyzer.js';
import type { Diagnostic } from '../recipe/diagnostics.js';
import type { Result } from '../result.js';
import * as session from '../session/recipe.js';
import { pipelineHome } from './pipeline-home.js';
import { cliIo } from './io.js';

/** Schemas as offline analysis sees them: the last live copy cached on disk, else the bundled one. */
export function offlineSchemas(home = pipelineHome()): (slug: string) => JsonSchema | undefined {
  return session.offlineSchemas(home);
}

/** What the analyzer reads through: schemas as offline analysis sees them, and the file system's probe. */
export function analyzerDeps(schemas = offlineSchemas()): AnalyzerDeps {
  return session.analyzerDeps(schemas);
}

/** Reads and analyzes a recipe as the command line gives it. */
export function loadRecipe(
  path: string,
  options: { set?: string[]; batch?: string; skipInvalidRows?: boolean },
  schemas = offlineSchemas(),
): Promise<Result<Plan, Diagnostic[]>> {
  return session.loadRecipeFile(path, options, cliIo().cwd, schemas);
}
