/** What the engine's parts of several actions share. */
import type { Scope } from '../expressions/expressions.js';
import { renderValue } from '../engine/values.js';
import { itemLabel } from '../item-label.js';
import type { PlannedStep, ValueTemplate } from '../plan.js';
import type { EngineContext } from '../engine/context.js';
import type { RemoteAction } from '../engine/remote.js';
import type { ActionCaching, ActionRun, RunnerResult } from './run-part.js';
import { itemOf } from '../engine/events.js';
import { sendPaidCall } from '../engine/paid-call.js';
import { inputForJournal } from '../engine/journal-input.js';

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
  answeredByGateway: true,
  cost: () => ({ tasks: 0, requests: 1 }),
  restoresFiles: true,
});

/** One call to the gateway with an answer and no task (a search, a fetch, a text call): here, or on a worker. */
export interface GatewayCall {
  call(ctx: Pick<EngineContext, 'client'>, input: Record<string, unknown>, signal: AbortSignal): RunnerResult;
  /**
   * Safe to make again: a read such as a search or a fetch. A call that is not (a text generation,
   * paid and answered in one exchange) is journaled before it is sent and when it ends, so that a
   * resume never sends it again while its outcome is unknown; and a worker that takes it over from
   * a lost one reports an outcome unknown instead of sending it a second time.
   */
  idempotent: boolean;
}

/** A signal nothing aborts: a paid call once sent is not cut off (a second Ctrl-C ends the process). */
const NEVER_STOPPED = new AbortController().signal;

/**
 * The run part of an action that is one call to the gateway (a search, a fetch, a text call): the
 * call here, or on a worker when the run has workers that take the step; cached as one request.
 */
export function gatewayCallRun<S extends PlannedStep & { action: RemoteAction }>(
  kind: S['action'] & RemoteAction,
  gatewayCall: GatewayCall,
): ActionRun<S> {
  return {
    render: renderWith,
    timedFromSlot: false,
    onWorkers: () => true,
    run: ({ ctx, row, step, index, signal }, rendered) => {
      const input = rendered as Record<string, unknown>;
      const item = remoteItem(row, step, index);
      // A paid call that has left is seen through to its answer, as a submission is: cut off by a stop
      // (Ctrl-C, the step's timeout), its outcome would be unknown, and a resume would pay for it again.
      const callSignal = gatewayCall.idempotent ? signal : NEVER_STOPPED;
      const call = () =>
        ctx.remote?.takes(step)
          ? ctx.remote.action(item, kind, input, signal)
          : gatewayCall.call(ctx, input, callSignal);
      if (gatewayCall.idempotent) return call();
      const paid = {
        ref: itemOf(row, step, index),
        label: item.label,
        model: String(input.model),
        input: inputForJournal(input),
      };
      return sendPaidCall(ctx, paid, signal, call);
    },
    cache: oneRequest(kind),
  };
}
