import { setMaxListeners } from 'node:events';
import type { PlannedStep } from '../plan.js';
import { sleep } from '../clock.js';
import type { Scope } from '../expressions/expressions.js';
import { itemKey, stepKey } from '../store/replay.js';
import type { EngineContext } from './context.js';
import { StepError, type StepFailure } from './failure.js';
import { runModel } from './model-runner.js';
import { runCommand, runLlm, runUpload, runWebFetch, runWebSearch } from './runners.js';
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
  const status = ctx.signal.aborted ? 'interrupted' : outcomes.some((o) => o.status === 'failed' || o.status === 'cancelled') ? 'failed' : 'succeeded';
  return { status, rows };
}

const failureOf = (error: unknown, signal: AbortSignal): StepFailure => {
  if (error instanceof StepError) return error.failure;
  if (signal.aborted) return { reason: 'interrupted', message: 'the run was stopped', retryable: false, outcomeUnknown: false };
  throw error;
};

async function runRow(ctx: EngineContext, row: number): Promise<RowResult> {
  const plan = ctx.plan;
  const byId = new Map(plan.steps.map((s) => [s.id as string, s]));
  const outcomes = new Map<string, Promise<StepOutcome>>();
  let stopped = false;
  for (const step of plan.steps) {
    outcomes.set(
      step.id,
      (async (): Promise<StepOutcome> => {
        const deps = await Promise.all(step.dependsOn.map((dep) => outcomes.get(dep)!.then((outcome) => [dep, outcome] as const)));
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
        const blocking = deps.find(([dep, o]) => o.status === 'cancelled' || (o.status === 'failed' && !byId.get(dep)!.continueOnError));
        if (blocking) return skip('cancelled', `it needs ${blocking[0]}, which ${blocking[1].status === 'failed' ? 'failed' : 'did not run'}`);
        if (stopped) return skip('cancelled', 'an earlier step failed');
        const scope: Scope = {
          inputs: plan.rows[row]!,
          steps: Object.fromEntries(deps.map(([dep, o]) => [dep, { outputs: o.status === 'succeeded' ? o.outputs : null }])),
          run: { id: ctx.runId, dir: ctx.runDir },
          env: ctx.env,
        };
        const outcome = await executeStep(ctx, row, step, scope);
        if (outcome.status === 'failed' && !step.continueOnError) stopped = true;
        return outcome;
      })(),
    );
  }
  const steps: Record<string, StepOutcome> = {};
  for (const step of plan.steps) steps[step.id] = await outcomes.get(step.id)!;
  const scope: Scope = { inputs: plan.rows[row]!, steps: Object.fromEntries(Object.entries(steps).map(([id, o]) => [id, { outputs: o.outputs }])), run: { id: ctx.runId, dir: ctx.runDir }, env: ctx.env };
  const outputs: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(plan.outputs)) {
    try {
      outputs[name] = renderValue(value, scope, `outputs.${name}`);
    } catch {
      outputs[name] = null;
    }
  }
  return { steps, outputs };
}

const label = (ctx: EngineContext, row: number, step: PlannedStep) => (ctx.plan.rows.length > 1 ? `row ${row + 1} ${step.id}` : step.id);

async function executeStep(ctx: EngineContext, row: number, step: PlannedStep, scope: Scope): Promise<StepOutcome> {
  const name = label(ctx, row, step);
  const finished = ctx.resume?.finishedSteps.get(stepKey(row, step.id));
  if (finished !== undefined) {
    ctx.report.note(`✓ ${name} (done before the resume)`);
    return { status: 'succeeded', outputs: finished, ms: 0, runs: Array.isArray(finished) ? finished.length : 1 };
  }
  const started = ctx.clock.now();
  try {
    if (step.if && !truthy(renderValue(step.if, scope, `${step.id}.if`))) {
      ctx.journal.append({ type: 'step-skipped', row, step: step.id, reason: 'its condition is false' });
      ctx.report.stepSkipped(name, 'its condition is false');
      return { status: 'skipped', outputs: null, reason: 'its condition is false', ms: 0, runs: 0 };
    }
    const items = step.forEach ? renderValue(step.forEach, scope, `${step.id}.for_each`) : [undefined];
    if (!Array.isArray(items)) throw new StepError({ reason: 'expression', message: `for_each gave ${JSON.stringify(items)?.slice(0, 80)}, not a list`, retryable: false, outcomeUnknown: false });
    ctx.journal.append({ type: 'step-started', row, step: step.id });
    ctx.report.stepStarted(name, step.forEach ? items.length : undefined);
    const results = new Map<number, unknown>();
    for (const [index] of items.entries()) {
      const done = ctx.resume?.finishedItems.get(itemKey(row, step.id, index));
      if (done !== undefined) results.set(index, done);
    }
    for (let attempt = 0; ; attempt++) {
      const failure = await runItems(ctx, row, step, scope, items, results);
      if (!failure) break;
      if (!failure.retryable || failure.outcomeUnknown || attempt >= step.retry.attempts || ctx.signal.aborted) throw new StepError(failure);
      const wait = step.retry.backoffMs * 2 ** attempt;
      ctx.report.note(`↻ ${name}: ${failure.message}; retrying in ${Math.round(wait / 1000)}s (${attempt + 1} of ${step.retry.attempts})`);
      await sleep(ctx.clock, wait, ctx.signal);
    }
    const outputs = step.forEach ? items.map((_, index) => results.get(index) ?? null) : (results.get(0) ?? null);
    const ms = ctx.clock.now() - started;
    ctx.journal.append({ type: 'step-finished', row, step: step.id, outputs, duration_ms: ms });
    ctx.report.stepFinished(name, ms);
    return { status: 'succeeded', outputs, ms, runs: items.length };
  } catch (error) {
    const failure = failureOf(error, ctx.signal);
    ctx.journal.append({ type: 'step-failed', row, step: step.id, reason: failure.reason, message: failure.message, outcome_unknown: failure.outcomeUnknown, ...(failure.taskId ? { task_id: failure.taskId } : {}) });
    ctx.log.warn({ step: step.id, row, reason: failure.reason, message: failure.message }, 'step failed');
    ctx.report.stepFailed(name, failure.message);
    return { status: 'failed', outputs: null, failure, ms: ctx.clock.now() - started, runs: 0 };
  }
}

/** Runs the items not done yet through a bounded window (the budget and the task slots pace them); the first failure, if any. */
async function runItems(ctx: EngineContext, row: number, step: PlannedStep, scope: Scope, items: unknown[], results: Map<number, unknown>): Promise<StepFailure | undefined> {
  const timeout = new AbortController();
  const timer = ctx.clock.setTimer(step.timeoutMs, () => timeout.abort(new Error('step timeout')));
  const signal = AbortSignal.any([ctx.signal, timeout.signal]);
  setMaxListeners(0, signal);
  try {
    // Items start through a window a few times the task slots wide: a 10,000-item fan-out keeps
    // a few hundred coroutines alive, not 10,000, and the slots never run dry.
    const width = Math.max(64, ctx.tasks.concurrency * 4);
    let next = 0;
    let firstError: { error: unknown } | undefined;
    const worker = async () => {
      while (next < items.length) {
        const index = next++;
        if (results.has(index)) continue;
        try {
          const itemScope: Scope = step.forEach ? { ...scope, item: items[index], index } : scope;
          const outputs = await runOne(ctx, row, step, index, itemScope, signal);
          results.set(index, outputs);
          if (step.forEach) {
            ctx.journal.append({ type: 'item-finished', row, step: step.id, index, outputs });
            ctx.report.itemFinished(label(ctx, row, step), results.size, items.length);
          }
        } catch (error) {
          firstError ??= { error };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
    if (!firstError) return undefined;
    if (timeout.signal.aborted && !ctx.signal.aborted) return { reason: 'step-timeout', message: `the step took longer than its time limit of ${Math.round(step.timeoutMs / 1000)}s`, retryable: false, outcomeUnknown: false };
    return failureOf(firstError.error, signal);
  } finally {
    ctx.clock.clearTimer(timer);
  }
}

async function runOne(ctx: EngineContext, row: number, step: PlannedStep, index: number, scope: Scope, signal: AbortSignal): Promise<unknown> {
  const where = `${step.id}${step.forEach ? `[${index}]` : ''}`;
  if (step.action === 'run') return runCommand(ctx, renderValue(step.run!, scope, `${where}.run`), signal);
  const input = renderValue(step.with, scope, `${where}.with`) as Record<string, unknown>;
  switch (step.action) {
    case 'web-search':
      return runWebSearch(ctx, input, signal);
    case 'web-fetch':
      return runWebFetch(ctx, input, signal);
    case 'llm':
      return runLlm(ctx, input, signal);
    case 'upload':
      return runUpload(ctx, input, signal);
    case 'model':
      return runModel(ctx, row, step, index, input, signal);
  }
}
