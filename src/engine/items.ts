import type { Scope } from '../expressions/expressions.js';
import type { PlannedStep } from '../plan.js';
import { type ClockTimer, sleep } from '../clock.js';
import { LinkedAbort } from '../linked-abort.js';
import { mayRetryStep, stepRetryDelay } from './step-retry.js';
import { err, type Result } from '../result.js';
import { stepKey } from '../store/replay.js';
import { cachedRun } from './cached-run.js';
import type { EngineContext } from './context.js';
import { interrupted, stepFailure, type StepFailure } from './failure.js';
import { itemLabel } from '../item-label.js';
import { emit } from './emit.js';
import { runnerOf } from '../actions/runners.js';
import { formatLimit } from '../duration.js';

/** Where a step's items are, and how it names them in messages: `row 2 image`. */
export interface StepRun {
  ctx: EngineContext;
  row: number;
  step: PlannedStep;
  name: string;
  scope: Scope;
  /** Told of each item that succeeded, at once: item-by-item steps downstream wait on it. */
  itemSucceeded?: (index: number, outputs: unknown) => void;
  /**
   * Told of each item the step has given up on, as soon as that is known (no retry can follow),
   * rather than when its last item ends: its descendants are skipped, or its fallback runs, at once.
   */
  itemGaveUp?: (failed: ItemFailure) => void;
  /**
   * Each item has the step's time limit to itself, from its own start: in a step that flows item by
   * item, the step as a whole lasts as long as its upstream step does.
   */
  timeoutPerItem?: boolean;
}

export interface ItemFailure {
  index: number;
  failure: StepFailure;
}

/** An item ready to run: its index, and the scope its expressions see (with `item` and `index`). */
export interface ReadyItem {
  index: number;
  scope: Scope;
  /** Already failed before it could run (its `if` could not be evaluated): recorded, not run. */
  failure?: StepFailure;
}

/**
 * The items of one pass of a step, in the order they become ready: all at once for a list known
 * when the step starts, one by one for a step that flows from another step's items. Each of the
 * `expected` indices is either pushed (to run) or dropped (it will not run in this pass).
 */
export class ReadyQueue {
  private ready: ReadyItem[] = [];
  /** The next ready item to hand out: a 10,000-item list is read from the front without shifting it. */
  private head = 0;
  private readonly waiting: Array<(item: ReadyItem | undefined) => void> = [];
  private remaining: number;

  constructor(expected: number) {
    this.remaining = expected;
  }

  push(item: ReadyItem): void {
    this.remaining--;
    const waiter = this.waiting.shift();
    if (waiter) waiter(item);
    else this.ready.push(item);
    this.wakeIfDone();
  }

  drop(): void {
    this.remaining--;
    this.wakeIfDone();
  }

  /**
   * An item that runs again once `wait` settles (a retry's backoff): the pass does not end before
   * it is pushed. A wait cut short (a stop, the step's time limit) pushes it with `failure` instead.
   */
  later(item: ReadyItem, wait: Promise<unknown>, failure: () => StepFailure): void {
    this.remaining++;
    wait.then(
      () => this.push(item),
      () => this.push({ ...item, failure: failure() }),
    );
  }

  /** The next ready item, or undefined once every index of the pass was pushed and taken, or dropped. */
  pull(): Promise<ReadyItem | undefined> {
    if (this.head < this.ready.length) {
      const next = this.ready[this.head++]!;
      if (this.head === this.ready.length) {
        this.ready = [];
        this.head = 0;
      }
      return Promise.resolve(next);
    }
    if (this.remaining <= 0) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private wakeIfDone(): void {
    if (this.remaining > 0 || this.head < this.ready.length) return;
    for (const waiter of this.waiting.splice(0)) waiter(undefined);
  }
}

/**
 * Runs the items of `queue` as they become ready, through a bounded window (the budget and the
 * task slots pace them), within the step's time limit. Every item runs even after one fails; the
 * step's failure, if any, accounts for all of them.
 */
export async function runItems(
  run: StepRun,
  queue: ReadyQueue,
  total: number,
  results: Map<number, unknown>,
  onFailure: (failed: ItemFailure) => void,
  /** Whether the failed item runs again (then it is queued again, and not a failure yet). */
  retried: (failed: ItemFailure, signal: AbortSignal) => boolean,
): Promise<{ failure?: StepFailure; failures: ItemFailure[] }> {
  const { ctx, step } = run;
  const linked = new LinkedAbort(ctx.signal);
  const timer = run.timeoutPerItem
    ? undefined
    : ctx.clock.setTimer(step.timeoutMs, () => linked.abort(new Error('step timeout')));
  try {
    const failures = await runWindow(run, queue, total, results, linked.signal, onFailure, retried);
    if (failures.length === 0) return { failures };
    // An item's own time limit is its own failure (`edit[3] took longer…`); the step's speaks for all.
    if (linked.abortedHere && !ctx.signal.aborted) {
      const limit = `its time limit of ${formatLimit(step.timeoutMs)}`;
      return { failure: stepFailure('step-timeout', `the step took longer than ${limit}`), failures };
    }
    return { failure: combineFailures(step, failures), failures };
  } finally {
    if (timer) ctx.clock.clearTimer(timer);
    linked.release();
  }
}

async function runWindow(
  run: StepRun,
  queue: ReadyQueue,
  total: number,
  results: Map<number, unknown>,
  signal: AbortSignal,
  onFailure: (failed: ItemFailure) => void,
  retried: (failed: ItemFailure, signal: AbortSignal) => boolean,
): Promise<ItemFailure[]> {
  const { ctx, row, step } = run;
  // Items start through a window a few times the task slots wide: a 10,000-item fan-out keeps
  // a few hundred coroutines alive, not 10,000, and the slots never run dry.
  const width = Math.max(64, ctx.tasks.concurrency * 4);
  const failures: ItemFailure[] = [];
  const worker = async () => {
    for (let next = await queue.pull(); next; next = await queue.pull()) {
      const { index, scope } = next;
      if (next.failure) {
        failures.push({ index, failure: next.failure });
        onFailure({ index, failure: next.failure });
        continue;
      }
      const work = () => runTimed(run, index, scope, signal);
      const outcome = await (ctx.withinStep ? ctx.withinStep(stepKey(row, step.id), work) : work());
      if (!outcome.ok) {
        const failed = { index, failure: outcome.error };
        if (retried(failed, signal)) continue;
        failures.push(failed);
        onFailure(failed);
        continue;
      }
      results.set(index, outcome.value);
      if (step.forEach) {
        const item = { step: step.id, row, index };
        emit(ctx, { type: 'item-finished', item, outputs: outcome.value, done: results.size, total });
      }
      run.itemSucceeded?.(index, outcome.value);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, Math.max(total, 1)) }, worker));
  return failures;
}

/**
 * One item, under its own time limit when the step has one per item. The limit counts from the
 * item's own start: for a model item, the moment it takes a task slot (items queued behind the
 * concurrency limit have not started); for the other actions, at once.
 */
async function runTimed(
  run: StepRun,
  index: number,
  scope: Scope,
  signal: AbortSignal,
): Promise<Result<unknown, StepFailure>> {
  const { ctx, row, step } = run;
  if (!run.timeoutPerItem) return runOne(ctx, row, step, index, scope, signal);
  const linked = new LinkedAbort(signal);
  let timer: ClockTimer | undefined;
  const started = () => {
    timer ??= ctx.clock.setTimer(step.timeoutMs, () => linked.abort(new Error('item timeout')));
  };
  if (!runnerOf(step).timedFromSlot) started();
  try {
    const outcome = await runOne(ctx, row, step, index, scope, linked.signal, started);
    if (!outcome.ok && !outcome.error.outcomeUnknown && linked.abortedHere && !signal.aborted)
      return err(
        stepFailure(
          'step-timeout',
          `${itemLabel({ step: step.id, index })} took longer than its time limit of ${formatLimit(step.timeoutMs)}`,
        ),
      );
    return outcome;
  } finally {
    if (timer !== undefined) ctx.clock.clearTimer(timer);
    linked.release();
  }
}

/**
 * Runs the items, and each failed item again when the retry policy allows its failure, up to the
 * recipe's attempts, after its own backoff from its own failure: an early failure of a 200-item
 * step is retried (and its chain goes on) while the other items still run, and a failure the
 * policy does not retry (a 400) is not sent again because another item's failure is retried. An
 * item given up on is told at once (`itemGaveUp`): its descendants are skipped, or its fallback runs.
 */
export async function runWithRetries(
  run: StepRun,
  queue: ReadyQueue,
  total: number,
  scopes: ReadonlyMap<number, Scope>,
  results: Map<number, unknown>,
): Promise<{ failure?: StepFailure; failures: ItemFailure[] }> {
  const { ctx, row, step } = run;
  const retriesUsed = new Map<number, number>();
  const retried = (failed: ItemFailure, signal: AbortSignal): boolean => {
    const used = retriesUsed.get(failed.index) ?? 0;
    if (used >= step.retry.attempts || signal.aborted || !mayRetryStep(failed.failure, step.retry.nonRetryable))
      return false;
    retriesUsed.set(failed.index, used + 1);
    const waitMs = stepRetryDelay(step.retry.backoffMs, used);
    const item = step.forEach ? { index: failed.index } : {};
    const retrying = { waitMs, attempt: used + 1, attempts: step.retry.attempts, ...item };
    emit(ctx, { type: 'step-retrying', at: { step: step.id, row }, failure: failed.failure, ...retrying });
    const scope = scopes.get(failed.index) ?? run.scope;
    // A new attempt may try again an upload that failed in the last one.
    const wait = sleep(ctx.clock, waitMs, signal).then(() => ctx.uploads.forgetFailures());
    queue.later({ index: failed.index, scope }, wait, () => (ctx.signal.aborted ? interrupted() : failed.failure));
    return true;
  };
  // Stopped by Ctrl-C: the items are cancelled, not failed.
  const gaveUp = (failed: ItemFailure) => {
    if (!ctx.signal.aborted) run.itemGaveUp?.(failed);
  };
  return runItems(run, queue, total, results, gaveUp, retried);
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
  const names = unknown.map((f) => itemLabel({ step: step.id, index: f.index })).join(', ');
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
  started?: () => void,
): Promise<Result<unknown, StepFailure>> {
  const where = itemLabel({ step: step.id, index: step.forEach ? index : undefined });
  const runner = runnerOf(step);
  const rendered = runner.render(step, scope, where);
  if (!rendered.ok) return rendered;
  // Its action runs the item on its rendered input (the command, for a `run` step), here or on a worker.
  const execute = () => runner.run({ ctx, row, step, index, signal, ...(started ? { started } : {}) }, rendered.value);
  if (!ctx.cache || !step.cache.enabled) return execute();
  return cachedRun({ ctx, row, step, index, scope, label: where }, rendered.value, execute);
}
