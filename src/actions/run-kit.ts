/** What the engine's parts of several actions share. */
import type { Scope } from '../expressions/expressions.js';
import { renderValue } from '../engine/values.js';
import { itemLabel } from '../item-label.js';
import type { PlannedStep, ValueTemplate } from '../plan.js';
import type { EngineContext } from '../engine/context.js';
import type { RemoteAction } from '../engine/remote.js';
import type { ActionCaching, ActionRun, RunnerResult } from './run-part.js';

/** A `uses:` step's input: its `with:`, rendered. */
export const renderWith = (step: { with: ValueTemplate }, scope: Scope, where: string) =>
  renderValue(step.with, scope, `${where}.with`);

/** How the workers and their records name an item. */
export const remoteItem = (row: number, step: PlannedStep, index: number) => ({
  row,
  step: step.id,
  index,
  label: itemLabel({ step: step.id, index: step.forEach ? index : undefined }),
});

/** The cache of an action named by its kind, one request a run, whose entries keep the outputs' files. */
export const oneRequest = <S extends PlannedStep>(kind: S['action']): ActionCaching<S> => ({
  keyAction: () => kind,
  inputHasFields: true,
  cost: () => ({ tasks: 0, requests: 1 }),
  restoresFiles: true,
});

/**
 * The run part of an action that is one call to the gateway (a search, a fetch, a text call): the
 * call here, or on a worker when the run has workers that take the step; cached as one request.
 */
export function gatewayCallRun<S extends PlannedStep & { action: RemoteAction }>(
  kind: S['action'] & RemoteAction,
  call: (ctx: EngineContext, input: Record<string, unknown>, signal: AbortSignal) => RunnerResult,
): ActionRun<S> {
  return {
    render: renderWith,
    timedFromSlot: false,
    onWorkers: () => true,
    run: ({ ctx, row, step, index, signal }, input) =>
      ctx.remote?.takes(step)
        ? ctx.remote.action(remoteItem(row, step, index), kind, input as Record<string, unknown>, signal)
        : call(ctx, input as Record<string, unknown>, signal),
    cache: oneRequest(kind),
  };
}
