import { setMaxListeners } from 'node:events';
import type { Scope } from '../expressions/expressions.js';
import type { PlannedStep } from '../plan.js';
import { type Result, unreachable } from '../result.js';
import { stepKey } from '../store/replay.js';
import { cachedRun } from './cached-run.js';
import { type Command, renderCommand } from './command.js';
import type { EngineContext } from './context.js';
import { stepFailure, type StepFailure } from './failure.js';
import { runModel } from './model-runner.js';
import { runCommand, runLlm, runUpload, runWebFetch, runWebSearch } from './runners.js';
import { renderValue } from './values.js';

/** Where a step's items are, and how it names them in messages: `row 2 image`. */
export interface StepRun {
  ctx: EngineContext;
  row: number;
  step: PlannedStep;
  name: string;
  scope: Scope;
}

interface ItemFailure {
  index: number;
  failure: StepFailure;
}

/**
 * Runs the items not done yet (`results` holds the done ones) through a bounded window (the budget
 * and the task slots pace them), within the step's time limit. Every item runs even after one
 * fails; the step's failure, if any, accounts for all of them.
 */
export async function runItems(
  run: StepRun,
  items: unknown[],
  results: Map<number, unknown>,
): Promise<StepFailure | undefined> {
  const { ctx, step } = run;
  const timeout = new AbortController();
  const timer = ctx.clock.setTimer(step.timeoutMs, () => timeout.abort(new Error('step timeout')));
  const signal = AbortSignal.any([ctx.signal, timeout.signal]);
  setMaxListeners(0, signal);
  try {
    const failures = await runWindow(run, items, results, signal);
    if (failures.length === 0) return undefined;
    if (timeout.signal.aborted && !ctx.signal.aborted) {
      return stepFailure(
        'step-timeout',
        `the step took longer than its time limit of ${Math.round(step.timeoutMs / 1000)}s`,
      );
    }
    return combineFailures(step, failures);
  } finally {
    ctx.clock.clearTimer(timer);
  }
}

async function runWindow(
  run: StepRun,
  items: unknown[],
  results: Map<number, unknown>,
  signal: AbortSignal,
): Promise<ItemFailure[]> {
  const { ctx, row, step } = run;
  // Items start through a window a few times the task slots wide: a 10,000-item fan-out keeps
  // a few hundred coroutines alive, not 10,000, and the slots never run dry.
  const width = Math.max(64, ctx.tasks.concurrency * 4);
  const failures: ItemFailure[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      if (results.has(index)) continue;
      const itemScope: Scope = step.forEach ? { ...run.scope, item: items[index], index } : run.scope;
      const work = () => runOne(ctx, row, step, index, itemScope, signal);
      const outcome = await (ctx.withinStep ? ctx.withinStep(stepKey(row, step.id), work) : work());
      if (!outcome.ok) {
        failures.push({ index, failure: outcome.error });
        continue;
      }
      results.set(index, outcome.value);
      if (step.forEach) {
        ctx.journal.append({ type: 'item-finished', row, step: step.id, index, outputs: outcome.value });
        ctx.report.itemFinished(run.name, results.size, items.length);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return failures;
}

/**
 * One failure for the step. Submissions whose outcome is unknown come first, all of them named:
 * each may have cost money and needs checking by hand, and none may be retried automatically.
 * Otherwise the first item to fail speaks for the step.
 */
export function combineFailures(step: PlannedStep, failures: ItemFailure[]): StepFailure {
  const unknown = failures.filter((f) => f.failure.outcomeUnknown).sort((a, b) => a.index - b.index);
  const others = failures.filter((f) => !f.failure.outcomeUnknown);
  const first = unknown[0] ?? failures[0];
  if (!first) throw new Error('Internal error: a step failure without a failed item');
  const otherItems = `${others.length} other ${others.length === 1 ? 'item' : 'items'}`;
  const otherNote =
    unknown.length > 0 && others.length > 0
      ? ` ${otherItems} failed too, the first with: ${others[0]!.failure.message}`
      : '';
  if (unknown.length <= 1) {
    return otherNote ? { ...first.failure, message: `${first.failure.message}.${otherNote}` } : first.failure;
  }
  const names = unknown.map((f) => `${step.id}[${f.index}]`).join(', ');
  const count = `${unknown.length} submissions have unknown outcomes`;
  const message = `${count}: ${names}. The first: ${first.failure.message}.${otherNote}`;
  return { ...first.failure, reason: 'outcome-unknown', message, outcomeUnknown: true };
}

async function runOne(
  ctx: EngineContext,
  row: number,
  step: PlannedStep,
  index: number,
  scope: Scope,
  signal: AbortSignal,
): Promise<Result<unknown, StepFailure>> {
  const where = `${step.id}${step.forEach ? `[${index}]` : ''}`;
  const rendered =
    step.action === 'run'
      ? renderCommand(step.run!, scope, `${where}.run`)
      : renderValue(step.with, scope, `${where}.with`);
  if (!rendered.ok) return rendered;
  const execute = () => dispatch(ctx, row, step, index, rendered.value, signal);
  if (!ctx.cache || !step.cache.enabled) return execute();
  return cachedRun({ ctx, row, step, index, scope, label: where }, rendered.value, execute);
}

/** Runs the item's action on its rendered input (the command, for a `run` step). */
function dispatch(
  ctx: EngineContext,
  row: number,
  step: PlannedStep,
  index: number,
  rendered: unknown,
  signal: AbortSignal,
): Promise<Result<unknown, StepFailure>> {
  if (step.action === 'run') return runCommand(ctx, rendered as Command, signal);
  const input = rendered as Record<string, unknown>;
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
    default:
      return unreachable(step.action);
  }
}
