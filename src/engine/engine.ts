import type { Scope } from '../expressions/expressions.js';
import type { PlannedStep } from '../plan.js';
import { ok, type Result } from '../result.js';
import { NO_OUTPUTS } from '../store/fold.js';
import { itemKey, stepKey } from '../store/replay.js';
import type { EngineContext } from './context.js';
import { ancestorsOf, conclusionOf, readsStatus, statusAfter } from './conditions.js';
import { failed, RUN_STOPPED, type StepFailure } from './failure.js';
import { hashFilesUnder } from './hash-files.js';
import { ItemFeed, type ItemEnd, type Lineage } from './item-feed.js';
import { flowItems, type FlowState, type SkippedItem } from './item-flow.js';
import { type ItemFailure, ReadyQueue, runWithRetries, type StepRun } from './items.js';
import { renderValue, truthy } from './values.js';
import { itemLabel, type StepRef } from '../item-label.js';
import { emit, locationOf } from './emit.js';
import { forgetRowDownloads } from './row-downloads.js';
import { RowAdmission, startRows } from './row-admission.js';

export type StepStatus = 'succeeded' | 'failed' | 'skipped' | 'cancelled';

export interface StepOutcome {
  status: StepStatus;
  outputs: unknown;
  failure?: StepFailure;
  /** Why it was skipped or cancelled. */
  reason?: string;
  ms: number;
  runs: number;
  /** Items that did not run: an item they descend from did not succeed, or their condition was false. */
  skippedItems?: Array<{ index: number; reason: string }>;
  /** The items that failed, each with its failure and lineage, for the items downstream of them. */
  failedItems?: Array<ItemFailure & { lineage: Lineage }>;
}

export interface RowResult {
  steps: Record<string, StepOutcome>;
  outputs: Record<string, unknown>;
}

export interface RunResult {
  /**
   * `stopped`: money stopped items (the spending cap, or the gateway's 402), whatever
   * continue_on_error says: a run that could not afford its work is never a success.
   */
  status: 'succeeded' | 'failed' | 'stopped' | 'interrupted';
  /**
   * Each row's outputs (the recipe's `outputs:`), in row order: all that a finished row leaves in
   * memory (the journal holds the rest), and rows without outputs share one empty object.
   */
  outputs: Array<Record<string, unknown>>;
  /** Each row's step outcomes and outputs, in row order; none with `ctx.forgetRows`. */
  rows: RowResult[];
}

/**
 * The most rows in progress at once, whatever the row admission allows (src/engine/row-admission.ts),
 * and all it holds to where there is none (`--workers`, a recipe without media tasks): few enough
 * that a batch of 100,000 rows does not hold 100,000 rows' promises, timers and scopes at once.
 */
export const rowsInProgress = (ctx: Pick<EngineContext, 'tasks'>) => Math.max(64, 4 * ctx.tasks.concurrency);

/**
 * Runs every row of a plan under the one budget and concurrency cap of the context, in order. A
 * row's inputs are made as it starts (a batch's plan holds its rows as a table); with
 * `ctx.forgetRows`, its results leave memory as it ends (its steps' outcomes are in the journal),
 * but for its outputs.
 */
export async function runPlan(ctx: EngineContext): Promise<RunResult> {
  const count = ctx.plan.rows.length;
  const outputs = new Array<Record<string, unknown>>(count);
  const rows = ctx.forgetRows ? [] : new Array<RowResult>(count);
  // A failure with continue_on_error concludes as a success, as in GitHub Actions.
  const continues = new Set(ctx.plan.steps.filter((s) => s.continueOnError).map((s) => s.id as string));
  const failedRow = (r: RowResult) =>
    Object.entries(r.steps).some(
      ([id, o]) => o.status === 'cancelled' || (o.status === 'failed' && !continues.has(id)),
    );
  let stopped = false;
  let failed = false;
  // Rows are let in as the task slots can take their work (src/engine/row-admission.ts): where the
  // recipe has tasks for the slots here, and more than one row.
  const admission =
    count > 1 && !ctx.remote && ctx.plan.steps.some((s) => s.action === 'model')
      ? new RowAdmission(ctx.tasks, ctx.clock, count)
      : undefined;
  const rowCtx: EngineContext = admission ? { ...ctx, rowProgress: admission } : ctx;
  await startRows(count, rowsInProgress(ctx), admission, async (row) => {
    const result = await runRow(rowCtx, row);
    forgetRowDownloads(ctx, row);
    stopped ||= stoppedByMoney(result);
    failed ||= failedRow(result);
    outputs[row] = Object.keys(result.outputs).length === 0 ? NO_OUTPUTS : result.outputs;
    if (!ctx.forgetRows) rows[row] = result;
  });
  const status = ctx.signal.aborted ? 'interrupted' : stopped ? 'stopped' : failed ? 'failed' : 'succeeded';
  return { status, outputs, rows };
}

/** Failure reasons that mean the run ran out of money, not that its work went wrong. */
const MONEY_REASONS: ReadonlySet<string> = new Set(['spend-cap', 'insufficient-balance']);

function stoppedByMoney(row: RowResult): boolean {
  return Object.values(row.steps).some(
    (outcome) =>
      (outcome.failure !== undefined && MONEY_REASONS.has(outcome.failure.reason)) ||
      (outcome.failedItems ?? []).some((item) => MONEY_REASONS.has(item.failure.reason)),
  );
}

const stepAt = (row: number, step: PlannedStep): StepRef => ({ step: step.id, row });

/** How many of a step's items were done before the resume: they do not run again. */
function countResumedItems(ctx: EngineContext, row: number, step: PlannedStep, count: number): number {
  let done = 0;
  for (let index = 0; index < count; index++) if (ctx.resume?.finishedItems.has(itemKey(row, step.id, index))) done++;
  return done;
}

/**
 * What a step's expressions see: each ended step's outputs, outcome and conclusion. The outputs are
 * null unless it succeeded, but for a failed for_each step's: the items that succeeded, null in the
 * places of the others.
 */
const scopeOf = (
  ctx: EngineContext,
  inputs: Record<string, unknown>,
  ended: ReadonlyArray<readonly [string, StepOutcome]>,
  status?: Scope['status'],
): Scope => ({
  inputs,
  steps: Object.fromEntries(
    ended.map(([id, o]) => {
      const step = ctx.plan.steps.find((s) => s.id === id);
      const outputs = o.status === 'succeeded' || o.status === 'failed' ? o.outputs : null;
      return [id, { outputs, ...conclusionOf(o, step) }];
    }),
  ),
  run: { id: ctx.runId, dir: ctx.runDir },
  env: ctx.env,
  hashFiles: (patterns) => hashFilesUnder(ctx.plan.recipeDir, patterns),
  ...(status ? { status } : {}),
});

/** What the steps of one row share while it runs. */
interface RowRun {
  outcomes: Map<string, Promise<StepOutcome>>;
  /** How each item of each for_each step ended, as it ends: what item-by-item steps wait on. */
  feeds: Map<string, ItemFeed>;
  /** A step failed (without continue_on_error): steps that wait for whole steps are cancelled. */
  stopped: boolean;
  /** The row's inputs, made once for the row (a batch's plan makes a row each time it is asked for one). */
  inputs: Record<string, unknown>;
}

async function runRow(ctx: EngineContext, row: number): Promise<RowResult> {
  if (ctx.resume?.completeRows?.has(row)) return completedRow(ctx, row);
  const state: RowRun = {
    outcomes: new Map(),
    feeds: new Map(ctx.plan.steps.filter((s) => s.forEach).map((s) => [s.id as string, new ItemFeed()])),
    stopped: false,
    inputs: ctx.plan.rows.at(row)!,
  };
  for (const step of ctx.plan.steps) state.outcomes.set(step.id, runWhenReady(ctx, row, step, state));
  const steps: Record<string, StepOutcome> = {};
  for (const step of ctx.plan.steps) steps[step.id] = await state.outcomes.get(step.id)!;
  const scope = scopeOf(ctx, state.inputs, Object.entries(steps));
  const outputs: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(ctx.plan.outputs)) {
    const rendered = renderValue(value, scope, `outputs.${name}`);
    outputs[name] = rendered.ok ? rendered.value : null;
  }
  return { steps, outputs };
}

/**
 * A row of a resumed run whose every step finished before: each step is resumed as it ended, and
 * the row is not made (the resume's fold kept none of its outputs: the recipe has no `outputs:`
 * that would read them, and no step of the row is left to).
 */
function completedRow(ctx: EngineContext, row: number): RowResult {
  const steps: Record<string, StepOutcome> = {};
  for (const step of ctx.plan.steps) {
    emit(ctx, { type: 'step-resumed', at: stepAt(row, step) });
    steps[step.id] = { status: 'succeeded', outputs: null, ms: 0, runs: 0 };
  }
  return { steps, outputs: {} };
}

/**
 * How a failed item ended, for the items downstream: `bg[1] failed` (`row 2 bg[1] failed` in a
 * batch, whose rows' failures are told apart), and its lineage with its own conclusion.
 */
const failedEnd = (ctx: EngineContext, row: number, step: PlannedStep, index: number, lineage: Lineage): ItemEnd => ({
  status: 'failed',
  cause: `${itemLabel({ step: step.id, index, row }, ctx.plan.rows.length)} failed`,
  lineage: { ...lineage, [step.id]: conclusionOf({ status: 'failed' }, step) },
});

/** Whether a failure is the run's stop (Ctrl-C, a signal) reaching the item, rather than its own. */
const stoppedBy = (ctx: EngineContext, failure: StepFailure): boolean =>
  ctx.signal.aborted && (failure.reason === 'interrupted' || failure.reason === 'aborted');

/** Runs the step when it is ready; then tells the items downstream how each of its items ended. */
async function runWhenReady(ctx: EngineContext, row: number, step: PlannedStep, state: RowRun): Promise<StepOutcome> {
  const outcome = await decideAndRun(ctx, row, step, state);
  // Before the feed speaks: a step that waits for a whole step must see the stop first.
  if (outcome.status === 'failed' && !step.continueOnError) state.stopped = true;
  const failedItems = new Map((outcome.failedItems ?? []).map((f) => [f.index, f]));
  state.feeds.get(step.id)?.close((index): ItemEnd => {
    const failed = failedItems.get(index);
    // An item the stop cut short did not fail: its descendants are cancelled with it, not skipped.
    if (failed && !stoppedBy(ctx, failed.failure)) return failedEnd(ctx, row, step, index, failed.lineage);
    const status = outcome.status === 'skipped' ? 'skipped' : 'cancelled';
    return {
      status,
      cause: ctx.signal.aborted
        ? RUN_STOPPED
        : `${itemLabel({ step: step.id, index, row }, ctx.plan.rows.length)} did not run`,
      lineage: { [step.id]: { outcome: status, conclusion: status } },
    };
  });
  return outcome;
}

/** Waits for the step's dependencies, then runs it, or says why it does not run. */
async function decideAndRun(ctx: EngineContext, row: number, step: PlannedStep, state: RowRun): Promise<StepOutcome> {
  const { outcomes } = state;
  const flowsFrom = step.itemsFrom?.perItem ? step.itemsFrom.step : undefined;
  const awaitDeps = (ids: string[]) =>
    Promise.all(ids.map((dep) => outcomes.get(dep)!.then((outcome) => [dep, outcome] as const)));
  // An `if` with success(), failure()… reads how every earlier step ended: it waits for them whole.
  const chosen = readsStatus(step) ? [] : (step.chosenItems ?? []);
  // Steps up the item's chain that its `if` reads per item are waited for through its lineage.
  const perItem = new Set<string>(flowsFrom ? (step.itemsFrom?.ancestorsReadPerItem ?? []) : []);
  const deps = await awaitDeps(
    step.dependsOn.filter((dep) => dep !== flowsFrom && !perItem.has(dep) && !chosen.some((c) => c.step === dep)),
  );
  // Chosen items (`branded ← hero[0]`): the step starts once they have succeeded, whatever the other
  // items of their step do; when one of them did not, it waits for the whole step and goes as it says.
  let wholeOnly = true;
  for (const { step: from, indices } of chosen) {
    const items = await chosenOutputs(state.feeds.get(from)!, indices);
    if (items) {
      deps.push([from, { status: 'succeeded', outputs: items, ms: 0, runs: 0 }]);
      wholeOnly = false;
    } else deps.push(...(await awaitDeps([from])));
  }
  const skip = (status: 'skipped' | 'cancelled', reason: string): StepOutcome => {
    emit(ctx, { type: status === 'skipped' ? 'step-skipped' : 'step-cancelled', at: stepAt(row, step), reason });
    return { status, outputs: null, reason, ms: 0, runs: 0 };
  };
  if (flowsFrom && step.itemsFrom) {
    const upstream = state.feeds.get(flowsFrom)!;
    const count = await upstream.count();
    if (count !== undefined) {
      if (ctx.signal.aborted) return skip('cancelled', RUN_STOPPED);
      // Other items go on after a failure elsewhere: only the steps it waits for whole can stop it.
      const status = readsStatus(step) ? statusAfter(ctx.plan, deps) : undefined;
      if (!status) {
        const blocked = blockedBy(ctx, deps, { stopped: false });
        if (blocked) return skip(blocked.status, blocked.reason);
      }
      const flow = { feed: upstream, count, lineage: step.itemsFrom };
      return executeStep(ctx, row, step, scopeOf(ctx, state.inputs, deps, status), state, flow);
    }
    // The upstream step ended with no list (skipped, cancelled, failed first): as any dependency,
    // and so are the steps up its chain that the `if` reads.
    deps.push(...(await awaitDeps([flowsFrom, ...perItem])));
  }
  if (ctx.signal.aborted) return skip('cancelled', RUN_STOPPED);
  let status: Scope['status'];
  if (readsStatus(step)) {
    // Its `if` decides, with success(), failure()…, whatever happened before: even after a failure.
    const ancestors = ancestorsOf(ctx.plan, step.id);
    const ended = await awaitDeps(ancestors);
    status = statusAfter(ctx.plan, ended);
  } else {
    // A failure elsewhere stops the steps that wait for whole steps; one that went on chosen items
    // goes on, as items that flow do: only the steps it waits for can stop it.
    const blocked = blockedBy(ctx, deps, wholeOnly ? state : { stopped: false });
    if (blocked) return skip(blocked.status, blocked.reason);
  }
  // A step that iterates X's items but reads X whole (`length(steps.bg.outputs)` in its `with`)
  // waited for all of X; its item i is still X[i]'s, skipped and named where X[i] failed (under
  // continue_on_error), not run on the null X[i] left.
  const wholeFeed = step.itemsFrom && !flowsFrom ? state.feeds.get(step.itemsFrom.step) : undefined;
  const count = await wholeFeed?.count();
  const flow = wholeFeed && count !== undefined ? { feed: wholeFeed, count, lineage: step.itemsFrom! } : undefined;
  return executeStep(ctx, row, step, scopeOf(ctx, state.inputs, deps, status), state, flow);
}

/**
 * The outputs of a step's chosen items, in a list as long as the step's (the others null), once
 * every chosen item has succeeded; undefined when one did not, or the step has fewer items or none.
 */
async function chosenOutputs(feed: ItemFeed, indices: readonly number[]): Promise<unknown[] | undefined> {
  const count = await feed.count();
  if (count === undefined || indices.some((index) => index >= count)) return undefined;
  const outputs = new Array<unknown>(count).fill(null);
  for (const index of indices) {
    const end = await feed.item(index);
    if (end.status !== 'succeeded') return undefined;
    outputs[index] = end.outputs;
  }
  return outputs;
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

async function executeStep(
  ctx: EngineContext,
  row: number,
  step: PlannedStep,
  scope: Scope,
  state: RowRun,
  flow?: { feed: ItemFeed; count: number; lineage: NonNullable<PlannedStep['itemsFrom']> },
): Promise<StepOutcome> {
  const feed = state.feeds.get(step.id);
  const flowState: FlowState = { lineages: new Map(), scopes: new Map(), skipped: [] };
  const lineageOf = (index: number): Lineage => flowState.lineages.get(index) ?? {};
  const succeeded = (index: number, outputs: unknown) =>
    feed?.end(index, {
      status: 'succeeded',
      outputs,
      lineage: { ...lineageOf(index), [step.id]: { outcome: 'success', conclusion: 'success' } },
    });
  /** Items already told failed (item-failed, and to the feed): the step's end does not tell them again. */
  const told = new Set<number>();
  const gaveUp = ({ index, failure }: ItemFailure) => {
    told.add(index);
    emit(ctx, { type: 'item-failed', item: { step: step.id, row, index }, failure, location: locationOf(ctx, step) });
    feed?.end(index, failedEnd(ctx, row, step, index, lineageOf(index)));
  };
  const run: StepRun = {
    ctx,
    row,
    step,
    name: itemLabel(stepAt(row, step), ctx.plan.rows.length),
    scope,
    itemSucceeded: succeeded,
    ...(step.forEach ? { itemGaveUp: gaveUp } : {}),
    ...(flow ? { timeoutPerItem: true } : {}),
  };
  const finished = ctx.resume?.finishedSteps.get(stepKey(row, step.id));
  if (finished !== undefined) {
    emit(ctx, { type: 'step-resumed', at: stepAt(row, step) });
    if (Array.isArray(finished) && step.forEach) {
      feed?.setCount(finished.length);
      for (const [index, outputs] of finished.entries()) succeeded(index, outputs);
    }
    return { status: 'succeeded', outputs: finished, ms: 0, runs: Array.isArray(finished) ? finished.length : 1 };
  }
  let started = ctx.clock.now();
  const items = flow ? ok(Array.from({ length: flow.count })) : stepItems(run);
  if (!items.ok) return failStep(run, items.error, started);
  if (items.value === 'skipped') {
    emit(ctx, { type: 'step-skipped', at: stepAt(row, step), reason: 'its condition is false' });
    return { status: 'skipped', outputs: null, reason: 'its condition is false', ms: 0, runs: 0 };
  }
  const list = items.value;
  const resumed = ctx.resume && step.forEach ? countResumedItems(ctx, row, step, list.length) : 0;
  // A step whose items flow starts when its first item arrives, not when its upstream step did: its
  // start and its time (TOOK, the report's bar) are those of its own work.
  let begun = false;
  const begin = () => {
    // After a stop (Ctrl-C) no step starts: items that arrive then are only told skipped.
    if (begun || ctx.signal.aborted) return;
    begun = true;
    if (flow) started = ctx.clock.now();
    emit(ctx, {
      type: 'step-started',
      at: stepAt(row, step),
      runs: step.forEach ? list.length : undefined,
      ...(resumed > 0 ? { resumed } : {}),
      ...(step.itemsFrom ? { itemsFrom: step.itemsFrom.step } : {}),
    });
  };
  if (!flow) begin();
  feed?.setCount(list.length);
  const results = new Map<number, unknown>();
  for (const [index] of list.entries()) {
    const done = ctx.resume?.finishedItems.get(itemKey(row, step.id, index));
    if (done === undefined) continue;
    results.set(index, done);
    // Done before the resume: every item it descends from had succeeded.
    flowState.lineages.set(index, succeededLineage(ctx, step));
    succeeded(index, done);
  }
  const queue = new ReadyQueue(list.length - results.size);
  if (flow) {
    flowItems(run, flow, queue, results, flowState, begin, (skipped) => skipItem(run, skipped, flowState, feed));
    // Every item done before a resume: none will arrive.
    if (results.size === list.length) begin();
  } else {
    for (const [index, item] of list.entries()) {
      if (results.has(index)) continue;
      const itemScope: Scope = step.forEach ? { ...scope, item, index } : scope;
      flowState.scopes.set(index, itemScope);
      queue.push({ index, scope: itemScope });
    }
  }
  const ended = await runWithRetries(run, queue, list.length, flowState.scopes, results);
  if (ended.failure) {
    const failedItems = ended.failures.map((f) => ({ ...f, lineage: lineageOf(f.index) }));
    if (step.forEach && !ctx.signal.aborted)
      for (const { index, failure } of [...failedItems]
        .sort((a, b) => a.index - b.index)
        .filter((f) => !told.has(f.index)))
        emit(ctx, {
          type: 'item-failed',
          item: { step: step.id, row, index },
          failure,
          location: locationOf(ctx, step),
        });
    // A stop before their tasks were sent: those items did not run, and say so, as the items
    // downstream of a stopped item do (a resume runs them). Items in flight stay as they are.
    if (step.forEach && ctx.signal.aborted)
      for (const { index } of failedItems.filter((f) => f.failure.notSubmitted).sort((a, b) => a.index - b.index))
        emit(ctx, {
          type: 'item-skipped',
          item: { step: step.id, row, index },
          reason: RUN_STOPPED,
          byCondition: false,
        });
    const outcome = failStep(run, ended.failure, started);
    // The items that succeeded were paid for: a failed for_each step keeps them in their places, null
    // in those of the items that failed (a later step or the recipe's outputs under continue_on_error
    // read them; all of them had read null).
    if (outcome.status === 'failed' && step.forEach)
      outcome.outputs = list.map((_, index) => results.get(index) ?? null);
    return { ...outcome, failedItems, ...skippedOf(flowState) };
  }
  const outputs = step.forEach ? list.map((_, index) => results.get(index) ?? null) : (results.get(0) ?? null);
  const ms = ctx.clock.now() - started;
  const cachedKeys = ctx.cache?.hitKeys.get(stepKey(row, step.id)) ?? [];
  if (cachedKeys.length === list.length) emit(ctx, { type: 'step-cached', at: stepAt(row, step), keys: cachedKeys });
  const skippedItems = flowState.skipped.map((s) => s.index).sort((a, b) => a - b);
  if (list.length > 0 && flowState.skipped.length === list.length) {
    // No item ran: the step is skipped, as a step whose `if` is false or whose dependency was skipped.
    const first = [...flowState.skipped].sort((a, b) => a.index - b.index)[0]!;
    if (ctx.signal.aborted && flowState.skipped.some((s) => s.end.status === 'cancelled')) {
      emit(ctx, { type: 'step-cancelled', at: stepAt(row, step), reason: RUN_STOPPED });
      return {
        status: 'cancelled',
        outputs: null,
        reason: RUN_STOPPED,
        ms,
        runs: 0,
        ...skippedOf(flowState),
      };
    }
    const reason = flowState.skipped.every(byCondition)
      ? 'its condition is false for every item'
      : `every item was skipped (the first: ${first.reason})`;
    emit(ctx, { type: 'step-skipped', at: stepAt(row, step), reason });
    return { status: 'skipped', outputs: null, reason, ms, runs: 0, ...skippedOf(flowState) };
  }
  emit(ctx, {
    type: 'step-finished',
    at: stepAt(row, step),
    outputs,
    durationMs: ms,
    items: list.length,
    skippedItems,
  });
  return { status: 'succeeded', outputs, ms, runs: list.length - skippedItems.length, ...skippedOf(flowState) };
}

const byCondition = (skipped: SkippedItem) => skipped.reason === 'its condition is false';

/** The lineage of an item done before a resume: it and every item it descends from succeeded. */
function succeededLineage(ctx: EngineContext, step: PlannedStep): Lineage {
  const lineage: Record<string, Lineage[string]> = {};
  for (let from = step.itemsFrom; from && !lineage[from.step]; ) {
    lineage[from.step] = { outcome: 'success', conclusion: 'success' };
    from = ctx.plan.steps.find((s) => s.id === from!.step)?.itemsFrom;
  }
  return lineage;
}

const skippedOf = (flowState: FlowState): Pick<StepOutcome, 'skippedItems'> =>
  flowState.skipped.length > 0
    ? {
        skippedItems: flowState.skipped
          .map(({ index, reason }) => ({ index, reason }))
          .sort((a, b) => a.index - b.index),
      }
    : {};

/** An item that does not run: told to the run's events and to the items downstream. */
function skipItem({ ctx, row, step }: StepRun, skipped: SkippedItem, flowState: FlowState, feed?: ItemFeed) {
  flowState.skipped.push(skipped);
  const item = { step: step.id, row, index: skipped.index };
  emit(ctx, { type: 'item-skipped', item, reason: skipped.reason, byCondition: byCondition(skipped) });
  feed?.end(skipped.index, skipped.end);
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
  if (!Array.isArray(items.value)) {
    // The expression as written: a misspelt field of an open schema gives null here, not at validate.
    const written = step.forEach.kind === 'template' ? ` ${step.forEach.text}` : '';
    return failed('expression', `for_each${written} gave ${JSON.stringify(items.value)?.slice(0, 80)}, not a list`);
  }
  return ok(items.value);
}

function failStep({ ctx, row, step }: StepRun, failure: StepFailure, started: number): StepOutcome {
  const ms = ctx.clock.now() - started;
  if (failure.reason === 'interrupted' && ctx.signal.aborted) {
    // Stopped, not broken: the step is cancelled like those that never started, and resume runs it again.
    emit(ctx, { type: 'step-cancelled', at: stepAt(row, step), reason: failure.message });
    return { status: 'cancelled', outputs: null, reason: failure.message, ms, runs: 0 };
  }
  const at = stepAt(row, step);
  emit(ctx, { type: 'step-failed', at, failure, continued: step.continueOnError, location: locationOf(ctx, step) });
  return { status: 'failed', outputs: null, failure, ms, runs: 0 };
}
