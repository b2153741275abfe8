import { PLANNERS } from '../actions/planners.js';
import { parseDuration } from '../duration.js';
import type { InputRows, PlannedStep, PlanSettings, StepCachePolicy, StepId } from '../plan.js';
import type { StepDraft } from './analyzer-types.js';
import { error, type Diagnostic } from './diagnostics.js';
import type { FileProbe } from './inputs.js';
import { ExpressionError, knownValue, UNKNOWN } from './known-values.js';
import { DEFAULTS } from './settings.js';
import { stepInputProblems } from './step-inputs.js';
import type { PathPart, SourceFile } from './source.js';

/** A drafted step as the plan holds it: its dependencies, retry, timeout and runs per row; its inputs checked. */
export function planStep(
  draft: StepDraft,
  byId: Map<string, StepDraft>,
  rows: InputRows,
  settings: PlanSettings,
  file: SourceFile,
  recipeDir: string,
  cwd: string,
  probe: FileProbe,
  diagnostics: Diagnostic[],
): PlannedStep {
  const path: PathPart[] = ['steps', draft.id];
  // One pass over the rows, and a row made only for a step that reads it (a batch's rows are made
  // again each time they are read): a step without for_each, if or checked inputs runs once a row.
  const readsRows = Boolean(draft.forEach || draft.if || draft.inputSchema);
  const runs: PlannedStep['runs'] = [];
  // Whether its `if` is left to the run in a row where the step may run (see PlannedStep.ifAtRunTime).
  let ifAtRunTime = false;
  if (!readsRows) for (let i = 0; i < rows.length; i++) runs.push(1);
  else
    for (const row of rows) {
      const { count, conditionKnown } = runsInRow(draft, row, file, path, diagnostics);
      runs.push(count);
      if (!conditionKnown && count !== 0) ifAtRunTime = true;
      // A step a row never runs (its `if` false, its `for_each` empty) sends nothing to be rejected.
      if (!draft.inputSchema || count === 0) continue;
      for (const problem of stepInputProblems(draft, row, recipeDir, cwd, probe))
        diagnostics.push(error(file, file.locate(problem.path, problem.which), problem.message));
    }
  // The steps it refers to, then those it needs, each once, in the order written: one pass, no copies.
  const dependsOn: StepId[] = [];
  const named = new Set<string>();
  const dependOn = ({ step }: { step: string }) => {
    if (named.has(step)) return;
    named.add(step);
    if (step !== draft.id && byId.has(step)) dependsOn.push(step as StepId);
  };
  draft.references.forEach(dependOn);
  draft.needs.forEach(dependOn);
  const retry = draft.raw.retry;
  const backoffMs =
    retry?.backoff === undefined ? DEFAULTS.backoffMs : (parseDuration(retry.backoff) ?? DEFAULTS.backoffMs);
  const timeoutMs =
    draft.raw.timeout === undefined ? settings.timeoutMs : (parseDuration(draft.raw.timeout) ?? settings.timeoutMs);
  const planner = PLANNERS[draft.action];
  const at = file.position(file.stepKeyOffset(draft.id) ?? file.locate(path, 'key').start);
  // Set field by field, in the plan's order: spreading optional parts into copies, once per step,
  // cost the analysis of 10,000 steps about 20 ms, run cold as a command runs it.
  const common: Omit<PlannedStep, 'id' | 'action' | 'with'> = {
    location: { line: at.line, column: at.col },
  } as Omit<PlannedStep, 'id' | 'action' | 'with'>;
  if (draft.forEach) common.forEach = draft.forEach;
  if (draft.if) common.if = draft.if;
  if (ifAtRunTime) common.ifAtRunTime = true;
  common.dependsOn = dependsOn;
  const retryPolicy: PlannedStep['retry'] = {
    attempts: retry?.attempts ?? (planner.retriesByDefault ? settings.retries : 0),
    backoffMs,
  };
  if (retry?.non_retryable?.length) retryPolicy.nonRetryable = [...new Set(retry.non_retryable)];
  common.retry = retryPolicy;
  common.timeoutMs = timeoutMs;
  common.continueOnError = draft.raw.continue_on_error ?? false;
  common.mediaFields = draft.mediaFields;
  common.runs = runs;
  common.layer = 0;
  common.cache = cachePolicy(draft, settings);
  return Object.assign({ id: draft.id as StepId, ...planner.plan(draft) }, common) as PlannedStep;
}

/** The step's cache policy: its own `cache` wins, else `settings.cache` unless its action is cached only on request. */
function cachePolicy(draft: StepDraft, settings: PlanSettings): StepCachePolicy {
  const own = draft.raw.cache;
  const defaults = PLANNERS[draft.action].cache;
  if (own === undefined) return { enabled: settings.cache && defaults.byDefault, ttlMs: defaults.ttlMs };
  if (typeof own === 'boolean') return { enabled: own, ttlMs: defaults.ttlMs };
  const ttlMs = own.ttl === undefined ? defaults.ttlMs : (parseDuration(own.ttl) ?? defaults.ttlMs);
  return { enabled: true, ttlMs, ...(draft.cacheKey ? { key: draft.cacheKey } : {}) };
}

/**
 * How many times a step runs in a row: 0 when its `if` is false, its `for_each` list's length, or
 * `dynamic` when only the run knows; and whether its `if` (if any) is known before the run.
 */
function runsInRow(
  draft: StepDraft,
  row: Record<string, unknown>,
  file: SourceFile,
  path: PathPart[],
  diagnostics: Diagnostic[],
): { count: number | 'dynamic'; conditionKnown: boolean } {
  let forEach: unknown;
  let condition: unknown;
  try {
    forEach = draft.forEach ? knownValue(draft.forEach, row) : undefined;
    condition = draft.if ? knownValue(draft.if, row) : undefined;
  } catch (cause) {
    if (!(cause instanceof ExpressionError)) throw cause;
    diagnostics.push(error(file, file.locate(path, 'key'), cause.message));
    return { count: 'dynamic', conditionKnown: false };
  }
  const conditionKnown = condition !== UNKNOWN;
  return { count: countInRow(draft, forEach, condition, file, path, diagnostics), conditionKnown };
}

function countInRow(
  draft: StepDraft,
  forEach: unknown,
  condition: unknown,
  file: SourceFile,
  path: PathPart[],
  diagnostics: Diagnostic[],
): number | 'dynamic' {
  if (condition === false) return 0;
  if (!draft.forEach) return 1;
  if (forEach === UNKNOWN) return 'dynamic';
  if (!Array.isArray(forEach)) {
    if (!draft.forEachReported)
      diagnostics.push(
        error(
          file,
          file.locate([...path, 'for_each']),
          `for_each must give a list, but this gives ${JSON.stringify(forEach)}`,
        ),
      );
    return 0;
  }
  return forEach.length;
}
