import type { Scope } from '../expressions/expressions.js';
import { sleep } from '../clock.js';
import { mayRetryStep, stepRetryDelay } from '../gateway/retry.js';
import type { PlannedStep } from '../plan.js';
import { ok, type Result } from '../result.js';
import { itemKey, stepKey } from '../store/replay.js';
import type { EngineContext } from './context.js';
import { ancestorsOf, conclusionOf, readsStatus, statusAfter } from './conditions.js';
import { failed, interrupted, type StepFailure } from './failure.js';
import { hashFilesUnder } from './hash-files.js';
import { runItems, type StepRun } from './items.js';
import { renderValue, truthy } from './values.js';

export type StepStatus = 'succeeded' | 'failed' | 'skipped' | 'cancelled';

export interface StepOutcome {
  status: StepStatus;
  outputs: unknown;
  failure?: StepFailure;
  /** Why it was skipped or cancelled. */
  reason?: string;
  ms: number;
  runs: number;
}

export interface RowResult {
  steps: Record<string, StepOutcome>;
  outputs: Record<string, unknown>;
}

export interface RunResult {
  status: 'succeeded' | 'failed' | 'interrupted';
  rows: RowResult[];
}

/** Runs every row of a plan under the one budget and concurrency cap of the context. */
export async function runPlan(ctx: EngineContext): Promise<RunResult> {
  const rows = await Promise.all(ctx.plan.rows.map((_, row) => runRow(ctx, row)));
  // A failure with continue_on_error concludes as a success, as in GitHub Actions.
  const continued = (id: string) => ctx.plan.steps.find((s) => s.id === id)?.continueOnError ?? false;
  const failedRow = (r: RowResult) =>
    Object.entries(r.steps).some(([id, o]) => o.status === 'cancelled' || (o.status === 'failed' && !continued(id)));
  const status = ctx.signal.aborted ? 'interrupted' : rows.some(failedRow) ? 'failed' : 'succeeded';
  return { status, rows };
}

const label = (ctx: EngineContext, row: number, step: PlannedStep) =>
  ctx.plan.rows.length > 1 ? `row ${row + 1} ${step.id}` : step.id;

/** What a step's expressions see: each ended step's outputs (null unless it succeeded), outcome and conclusion. */
const scopeOf = (
  ctx: EngineContext,
  row: number,
  ended: ReadonlyArray<readonly [string, StepOutcome]>,
  status?: Scope['status'],
): Scope => ({
  inputs: ctx.plan.rows[row]!,
  steps: Object.fromEntries(
    ended.map(([id, o]) => {
      const step = ctx.plan.steps.find((s) => s.id === id);
      return [id, { outputs: o.status === 'succeeded' ? o.outputs : null, ...conclusionOf(o, step) }];
    }),
  ),
  run: { id: ctx.runId, dir: ctx.runDir },
  env: ctx.env,
  hashFiles: (patterns) => hashFilesUnder(ctx.plan.recipeDir, patterns),
  ...(status ? { status } : {}),
});

async function runRow(ctx: EngineContext, row: number): Promise<RowResult> {
  const outcomes = new Map<string, Promise<StepOutcome>>();
  const state = { stopped: false };
  for (const step of ctx.plan.steps) outcomes.set(step.id, runWhenReady(ctx, row, step, outcomes, state));
  const steps: Record<string, StepOutcome> = {};
  for (const step of ctx.plan.steps) steps[step.id] = await outcomes.get(step.id)!;
  const scope = scopeOf(ctx, row, Object.entries(steps));
  const outputs: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(ctx.plan.outputs)) {
    const rendered = renderValue(value, scope, `outputs.${name}`);
    outputs[name] = rendered.ok ? rendered.value : null;
  }
  return { steps, outputs };
}

/** Waits for the step's dependencies, then runs it, or says why it does not run. */
async function runWhenReady(
  ctx: EngineContext,
  row: number,
  step: PlannedStep,
  outcomes: Map<string, Promise<StepOutcome>>,
  state: { stopped: boolean },
): Promise<StepOutcome> {
  const deps = await Promise.all(
    step.dependsOn.map((dep) => outcomes.get(dep)!.then((outcome) => [dep, outcome] as const)),
  );
  const skip = (status: 'skipped' | 'cancelled', reason: string): StepOutcome => {
    ctx.journal.append({ type: status === 'skipped' ? 'step-skipped' : 'step-cancelled', row, step: step.id, reason });
    // Cancellations are many after a stop or a failure: the run's end counts them in one line.
    if (status === 'skipped') ctx.report.stepSkipped(label(ctx, row, step), reason);
    return { status, outputs: null, reason, ms: 0, runs: 0 };
  };
  if (ctx.signal.aborted) return skip('cancelled', 'the run was stopped');
  let status: Scope['status'];
  if (readsStatus(step)) {
    // Its `if` decides, with success(), failure()…, whatever happened before: even after a failure.
    const ancestors = ancestorsOf(ctx.plan, step.id);
    const ended = await Promise.all(ancestors.map((id) => outcomes.get(id)!.then((o) => [id, o] as const)));
    status = statusAfter(ctx.plan, ended);
  } else {
    const blocked = blockedBy(ctx, deps, state);
    if (blocked) return skip(blocked.status, blocked.reason);
  }
  const outcome = await executeStep(ctx, row, step, scopeOf(ctx, row, deps, status));
  if (outcome.status === 'failed' && !step.continueOnError) state.stopped = true;
  return outcome;
}

/** The implicit `success()` of an `if` without status functions: why the step does not run, if it does not. */
function blockedBy(
  ctx: EngineContext,
  deps: ReadonlyArray<readonly [string, StepOutcome]>,
  state: { stopped: boolean },
): { status: 'skipped' | 'cancelled'; reason: string } | undefined {
  const skippedDep = deps.find(([, o]) => o.status === 'skipped');
  if (skippedDep) return { status: 'skipped', reason: `it needs ${skippedDep[0]}, which was skipped` };
  const continues = (dep: string) => ctx.plan.steps.find((s) => s.id === dep)!.continueOnError;
  const blocking = deps.find(([dep, o]) => o.status === 'cancelled' || (o.status === 'failed' && !continues(dep)));
  if (blocking) {
    const what = blocking[1].status === 'failed' ? 'failed' : 'did not run';
    return { status: 'cancelled', reason: `it needs ${blocking[0]}, which ${what}` };
  }
  if (state.stopped) return { status: 'cancelled', reason: 'an earlier step failed' };
  return undefined;
}

async function executeStep(ctx: EngineContext, row: number, step: PlannedStep, scope: Scope): Promise<StepOutcome> {
  const run: StepRun = { ctx, row, step, name: label(ctx, row, step), scope };
  const finished = ctx.resume?.finishedSteps.get(stepKey(row, step.id));
  if (finished !== undefined) {
    ctx.report.note(`✓ ${run.name} (done before the resume)`);
    return { status: 'succeeded', outputs: finished, ms: 0, runs: Array.isArray(finished) ? finished.length : 1 };
  }
  const started = ctx.clock.now();
  const items = stepItems(run);
  if (!items.ok) return failStep(run, items.error, started);
  if (items.value === 'skipped') {
    ctx.journal.append({ type: 'step-skipped', row, step: step.id, reason: 'its condition is false' });
    ctx.report.stepSkipped(run.name, 'its condition is false');
    return { status: 'skipped', outputs: null, reason: 'its condition is false', ms: 0, runs: 0 };
  }
  const list = items.value;
  ctx.journal.append({ type: 'step-started', row, step: step.id });
  ctx.report.stepStarted(run.name, step.forEach ? list.length : undefined);
  const results = new Map<number, unknown>();
  for (const [index] of list.entries()) {
    const done = ctx.resume?.finishedItems.get(itemKey(row, step.id, index));
    if (done !== undefined) results.set(index, done);
  }
  const failure = await runWithRetries(run, list, results);
  if (failure) return failStep(run, failure, started);
  const outputs = step.forEach ? list.map((_, index) => results.get(index) ?? null) : (results.get(0) ?? null);
  const ms = ctx.clock.now() - started;
  const cachedKeys = ctx.cache?.hitKeys.get(stepKey(row, step.id)) ?? [];
  if (cachedKeys.length === list.length)
    ctx.journal.append({ type: 'step-cached', row, step: step.id, keys: cachedKeys });
  ctx.journal.append({ type: 'step-finished', row, step: step.id, outputs, duration_ms: ms });
  ctx.report.stepFinished(run.name, ms);
  return { status: 'succeeded', outputs, ms, runs: list.length };
}

/** The step's items (one, `undefined`, without `for_each`), or `skipped` when its condition is false. */
function stepItems({ step, scope }: StepRun): Result<unknown[] | 'skipped', StepFailure> {
  if (step.if) {
    const condition = renderValue(step.if, scope, `${step.id}.if`);
    if (!condition.ok) return condition;
    if (!truthy(condition.value)) return ok('skipped');
  }
  if (!step.forEach) return ok([undefined]);
  const items = renderValue(step.forEach, scope, `${step.id}.for_each`);
  if (!items.ok) return items;
  if (!Array.isArray(items.value))
    return failed('expression', `for_each gave ${JSON.stringify(items.value)?.slice(0, 80)}, not a list`);
  return ok(items.value);
}

/** Runs the items, and again after a failure the retry policy allows, up to the recipe's attempts. */
async function runWithRetries(
  run: StepRun,
  items: unknown[],
  results: Map<number, unknown>,
): Promise<StepFailure | undefined> {
  const { ctx, step } = run;
  for (let attempt = 0; ; attempt++) {
    const failure = await runItems(run, items, results);
    if (!failure) return undefined;
    if (!mayRetryStep(failure) || attempt >= step.retry.attempts || ctx.signal.aborted) return failure;
    const wait = stepRetryDelay(step.retry.backoffMs, attempt);
    const counted = `${attempt + 1} of ${step.retry.attempts}`;
    ctx.report.note(`↻ ${run.name}: ${failure.message}; retrying in ${Math.round(wait / 1000)}s (${counted})`);
    try {
      await sleep(ctx.clock, wait, ctx.signal);
    } catch {
      return interrupted();
    }
    // A new attempt may try again an upload that failed in the last one.
    ctx.uploads.forgetFailures();
  }
}

function failStep({ ctx, row, step, name }: StepRun, failure: StepFailure, started: number): StepOutcome {
  const ms = ctx.clock.now() - started;
  if (failure.reason === 'interrupted' && ctx.signal.aborted) {
    // Stopped, not broken: the step is cancelled like those that never started, and resume runs it again.
    ctx.journal.append({ type: 'step-cancelled', row, step: step.id, reason: failure.message });
    return { status: 'cancelled', outputs: null, reason: failure.message, ms, runs: 0 };
  }
  const taskId = failure.taskId ? { task_id: failure.taskId } : {};
  ctx.journal.append({
    type: 'step-failed',
    row,
    step: step.id,
    reason: failure.reason,
    message: failure.message,
    outcome_unknown: failure.outcomeUnknown,
    ...taskId,
    ...(step.continueOnError ? { continued: true } : {}),
  });
  ctx.log.warn({ step: step.id, row, reason: failure.reason, message: failure.message }, 'step failed');
  ctx.report.stepFailed(
    name,
    step.continueOnError ? `${failure.message} (continue_on_error: the run goes on)` : failure.message,
  );
  return { status: 'failed', outputs: null, failure, ms, runs: 0 };
}
