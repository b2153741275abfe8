import type { Scope } from '../expressions/expressions.js';
import { sleep } from '../clock.js';
import { mayRetryStep, stepRetryDelay } from '../gateway/retry.js';
import type { PlannedStep } from '../plan.js';
import { ok, type Result } from '../result.js';
import { itemKey, stepKey } from '../store/replay.js';
import type { EngineContext } from './context.js';
import { failed, interrupted, type StepFailure } from './failure.js';
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
  const outcomes = rows.flatMap((r) => Object.values(r.steps));
  const status = ctx.signal.aborted
    ? 'interrupted'
    : outcomes.some((o) => o.status === 'failed' || o.status === 'cancelled')
      ? 'failed'
      : 'succeeded';
  return { status, rows };
}

const label = (ctx: EngineContext, row: number, step: PlannedStep) =>
  ctx.plan.rows.length > 1 ? `row ${row + 1} ${step.id}` : step.id;

const scopeOf = (ctx: EngineContext, row: number, steps: Record<string, unknown>): Scope => ({
  inputs: ctx.plan.rows[row]!,
  steps: Object.fromEntries(Object.entries(steps).map(([id, outputs]) => [id, { outputs }])),
  run: { id: ctx.runId, dir: ctx.runDir },
  env: ctx.env,
});

async function runRow(ctx: EngineContext, row: number): Promise<RowResult> {
  const outcomes = new Map<string, Promise<StepOutcome>>();
  const state = { stopped: false };
  for (const step of ctx.plan.steps) outcomes.set(step.id, runWhenReady(ctx, row, step, outcomes, state));
  const steps: Record<string, StepOutcome> = {};
  for (const step of ctx.plan.steps) steps[step.id] = await outcomes.get(step.id)!;
  const scope = scopeOf(ctx, row, Object.fromEntries(Object.entries(steps).map(([id, o]) => [id, o.outputs])));
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
    if (status === 'skipped') {
      ctx.journal.append({ type: 'step-skipped', row, step: step.id, reason });
      ctx.report.stepSkipped(label(ctx, row, step), reason);
    }
    return { status, outputs: null, reason, ms: 0, runs: 0 };
  };
  if (ctx.signal.aborted) return skip('cancelled', 'the run was stopped');
  const skippedDep = deps.find(([, o]) => o.status === 'skipped');
  if (skippedDep) return skip('skipped', `it needs ${skippedDep[0]}, which was skipped`);
  const continues = (dep: string) => ctx.plan.steps.find((s) => s.id === dep)!.continueOnError;
  const blocking = deps.find(([dep, o]) => o.status === 'cancelled' || (o.status === 'failed' && !continues(dep)));
  if (blocking)
    return skip(
      'cancelled',
      `it needs ${blocking[0]}, which ${blocking[1].status === 'failed' ? 'failed' : 'did not run'}`,
    );
  if (state.stopped) return skip('cancelled', 'an earlier step failed');
  const scope = scopeOf(
    ctx,
    row,
    Object.fromEntries(deps.map(([dep, o]) => [dep, o.status === 'succeeded' ? o.outputs : null])),
  );
  const outcome = await executeStep(ctx, row, step, scope);
  if (outcome.status === 'failed' && !step.continueOnError) state.stopped = true;
  return outcome;
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
  const taskId = failure.taskId ? { task_id: failure.taskId } : {};
  ctx.journal.append({
    type: 'step-failed',
    row,
    step: step.id,
    reason: failure.reason,
    message: failure.message,
    outcome_unknown: failure.outcomeUnknown,
    ...taskId,
  });
  ctx.log.warn({ step: step.id, row, reason: failure.reason, message: failure.message }, 'step failed');
  ctx.report.stepFailed(name, failure.message);
  return { status: 'failed', outputs: null, failure, ms: ctx.clock.now() - started, runs: 0 };
}
