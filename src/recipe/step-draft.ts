import { actionNamedBy, PLANNERS, usesChoices } from '../actions/planners.js';
import type { AnalyzerDeps, RawStep, StepDraft } from './analyzer-types.js';
import { error, type Diagnostic } from './diagnostics.js';
import type { PathPart, SourceFile } from './source.js';
import { hasExpression } from '../expressions/expressions.js';
import { compileValue, type Reference } from './templates.js';

/** A step's action, schema and compiled values, with what it refers to: the first pass over each step. */
export function draftStep(
  id: string,
  raw: RawStep,
  file: SourceFile,
  deps: AnalyzerDeps,
  diagnostics: Diagnostic[],
): StepDraft {
  const path: PathPart[] = ['steps', id];
  const references: Reference[] = [];
  const compile = (value: unknown, at: PathPart[]) => compileValue(value, at, file, diagnostics, references);
  const named = actionNamedBy(raw.uses);
  if (named === undefined)
    diagnostics.push(
      error(file, file.locate([...path, 'uses']), `uses must be ${usesChoices()} (got ${JSON.stringify(raw.uses)})`),
    );
  // A `uses:` that names no action was reported; the step is drafted as a command, which is never run.
  const action = named ?? 'run';
  const { model, inputSchema, outputs, mediaFields } = PLANNERS[action].draft({ raw, path, file, deps, diagnostics });
  if (raw.uses !== undefined && raw.runs_on !== undefined)
    diagnostics.push(
      error(
        file,
        file.locate([...path, 'runs_on'], 'key'),
        "runs_on says where a run step's command runs; a uses step goes to the workers whenever the run has --workers",
      ),
    );
  const needsList = raw.needs === undefined ? [] : Array.isArray(raw.needs) ? raw.needs : [raw.needs];
  const needs = needsList.map((step, i) => ({
    step,
    path: Array.isArray(raw.needs) ? [...path, 'needs', i] : [...path, 'needs'],
  }));
  return {
    id,
    raw,
    action,
    ...(model ? { model } : {}),
    ...(inputSchema ? { inputSchema } : {}),
    with: compile(raw.with ?? {}, [...path, 'with']),
    ...(raw.run !== undefined ? { run: compile(raw.run, [...path, 'run']) } : {}),
    ...(raw.for_each !== undefined ? { forEach: compile(raw.for_each, [...path, 'for_each']) } : {}),
    ...(raw.if !== undefined ? { if: compile(conditionText(raw.if), [...path, 'if']) } : {}),
    ...(typeof raw.cache === 'object' && raw.cache.key !== undefined
      ? { cacheKey: compile(raw.cache.key, [...path, 'cache', 'key']) }
      : {}),
    references,
    needs,
    mediaFields,
    outputs,
  };
}

/** As in GitHub Actions, an `if` may leave out `${{ }}`: `if: failure()` is an expression, not text. */
function conditionText(condition: string | boolean): string | boolean {
  return typeof condition === 'string' && !hasExpression(condition) ? `\${{ ${condition} }}` : condition;
}
