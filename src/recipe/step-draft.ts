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
  // The optional fields set one by one rather than spread from copies, once per step; the values
  // compiled in the order written, which is the order of the references and diagnostics.
  const draft: StepDraft = {
    id,
    raw,
    action,
    with: compile(raw.with ?? {}, [...path, 'with']),
    references,
    needs,
    mediaFields,
    outputs,
  };
  if (model) draft.model = model;
  if (inputSchema) draft.inputSchema = inputSchema;
  if (raw.run !== undefined) draft.run = compile(raw.run, [...path, 'run']);
  if (raw.for_each !== undefined) draft.forEach = compile(raw.for_each, [...path, 'for_each']);
  if (raw.if !== undefined) draft.if = compile(conditionText(raw.if), [...path, 'if']);
  if (typeof raw.cache === 'object' && raw.cache.key !== undefined)
    draft.cacheKey = compile(raw.cache.key, [...path, 'cache', 'key']);
  return draft;
}

/** As in GitHub Actions, an `if` may leave out `${{ }}`: `if: failure()` is an expression, not text. */
function conditionText(condition: string | boolean): string | boolean {
  return typeof condition === 'string' && !hasExpression(condition) ? `\${{ ${condition} }}` : condition;
}
