/**
 * The items of a step that flows from another step's items (`badge: for_each: ${{ steps.bg.outputs }}`):
 * item i becomes ready the moment bg[i] succeeded, and is skipped, with the item its trouble began
 * with named (`bg[1] failed`), when bg[i] did not, unless its `if` decides: one that calls a status
 * function, or, after a failure under continue_on_error (which concludes success), one that reads
 * the outcome of an item in its lineage.
 */
import type { Scope } from '../expressions/expressions.js';
import { evaluate } from '../expressions/expressions.js';
import type { ItemLineage } from '../plan.js';
import { conclusionOf, readsStatus } from './conditions.js';
import type { StepFailure } from './failure.js';
import type { ItemEnd, ItemFeed, Lineage } from './item-feed.js';
import type { ReadyQueue, StepRun } from './items.js';
import { renderValue, truthy } from './values.js';
import { itemLabel } from '../item-label.js';

/** An item that does not run, and why: the upstream trouble, or its own condition. */
export interface SkippedItem {
  index: number;
  reason: string;
  /** How it ended for the items downstream of it. */
  end: ItemEnd;
}

export interface FlowState {
  /** Each item's lineage, as its upstream item ended. */
  lineages: Map<number, Lineage>;
  /** The scope each ready item ran with: a retry runs it again with the same. */
  scopes: Map<number, Scope>;
  skipped: SkippedItem[];
}

/**
 * Feeds `queue` with the items of `run` as their upstream items end; `count` of them, less those
 * done before a resume (in `results`). Calls `skip` for each item that does not run.
 */
export function flowItems(
  run: StepRun,
  from: { feed: ItemFeed; count: number; lineage: ItemLineage },
  queue: ReadyQueue,
  results: ReadonlyMap<number, unknown>,
  state: FlowState,
  /** Called as each item arrives, before anything is told of it: the step starts with its first. */
  arriving: () => void,
  skip: (item: SkippedItem) => void,
): void {
  for (let index = 0; index < from.count; index++) {
    if (results.has(index)) continue;
    void from.feed.item(index).then((end) => {
      arriving();
      const arrived = arrive(run, from.lineage, index, end);
      state.lineages.set(index, arrived.lineage);
      if (arrived.kind === 'skip') {
        skip(arrived.item);
        queue.drop();
        return;
      }
      state.scopes.set(index, arrived.scope);
      queue.push({ index, scope: arrived.scope, ...(arrived.failure ? { failure: arrived.failure } : {}) });
    });
  }
}

type Arrival =
  | { kind: 'skip'; item: SkippedItem; lineage: Lineage }
  | { kind: 'run'; scope: Scope; lineage: Lineage; failure?: StepFailure };

function arrive(run: StepRun, lineage: ItemLineage, index: number, end: ItemEnd): Arrival {
  const { step } = run;
  const upstream = lineage.step;
  const upstreamEnd = end.status === 'succeeded' ? conclusionOf(end, undefined) : undefined;
  const chain: Lineage = {
    ...end.lineage,
    ...(upstreamEnd && !end.lineage[upstream] ? { [upstream]: upstreamEnd } : {}),
  };
  const skipped = (reason: string, cause: string, status: 'skipped' | 'cancelled' = 'skipped'): Arrival => {
    const own = { ...chain, [step.id]: { outcome: status, conclusion: status } } as Lineage;
    return { kind: 'skip', lineage: chain, item: { index, reason, end: { status, cause, lineage: own } } };
  };
  const statusReading = readsStatus(step);
  if (end.status !== 'succeeded' && !statusReading && !(lineage.ifReadsLineageOutcome && concludedSuccess(end))) {
    // Implicit success(): an item whose upstream item did not succeed does not run. As in GitHub
    // Actions, a failure under continue_on_error concludes `success`: then an item whose `if` reads
    // its lineage's outcome lets that `if` decide (`if: steps.bg.outcome == 'failure'` routes bg[i]
    // to a fallback). Any other item has no input to run on (a paid call on a null), and is skipped.
    return end.status === 'cancelled' ? skipped(end.cause, end.cause, 'cancelled') : skipped(end.cause, end.cause);
  }
  const outputs = end.status === 'succeeded' ? end.outputs : null;
  const item = project(outputs, lineage);
  const conclusions = Object.values(chain).map((c) => c.conclusion);
  const wholeStatus = run.scope.status;
  // What the item's `with` (or command) reads: every step as a whole. A step it reads the outcome
  // of there, it has waited for all of, so it gets that step's outcome, not its own ancestor's.
  const scope: Scope = { ...run.scope, item, index };
  if (!step.if) return { kind: 'run', scope, lineage: chain };
  // The item's `if` reads the steps of its lineage as its own upstream items ended.
  const ifScope: Scope = {
    ...scope,
    steps: { ...run.scope.steps, ...lineageSteps(run.scope, chain) },
    ...(statusReading
      ? {
          status: {
            failure: conclusions.includes('failure') || (wholeStatus?.failure ?? false),
            cancelled: conclusions.includes('cancelled') || (wholeStatus?.cancelled ?? false),
          },
        }
      : {}),
  };
  const condition = renderValue(step.if, ifScope, `${step.id}[${index}].if`);
  if (!condition.ok) return { kind: 'run', scope, lineage: chain, failure: condition.error };
  if (!truthy(condition.value))
    return skipped(
      'its condition is false',
      `${itemLabel({ step: step.id, index, row: run.row }, run.ctx.plan.rows.length)} was skipped`,
    );
  return { kind: 'run', scope, lineage: chain };
}

/** An upstream item that failed, every failure in its lineage under continue_on_error. */
const concludedSuccess = (end: ItemEnd): boolean =>
  end.status === 'failed' && Object.values(end.lineage).every((c) => c.conclusion === 'success');

/** The steps of the item's lineage as its expressions see them: the outcome of its own upstream items. */
function lineageSteps(scope: Scope, chain: Lineage): Scope['steps'] {
  return Object.fromEntries(
    Object.entries(chain).map(([id, end]) => [id, { outputs: scope.steps[id]?.outputs ?? null, ...end }]),
  );
}

/** What item i of the step is: the projection of its upstream item's outputs (`images[0].url`). */
export function project(outputs: unknown, lineage: ItemLineage): unknown {
  if (lineage.projection.length === 0) return outputs;
  return evaluate({ kind: 'path', root: 'item', segments: lineage.projection, start: 0, end: 0 }, {
    inputs: {},
    steps: {},
    item: outputs,
    run: { id: '', dir: '' },
    env: {},
  } as Scope);
}
