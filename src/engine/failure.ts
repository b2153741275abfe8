import type { GatewayFailure } from '../gateway/failures.js';
import type { StepFailureReason } from './step-retry.js';
import { err } from '../result.js';

/**
 * Why a step failed, as a value. Gateway failures keep their own reason and stay attached as
 * `cause` (with their status and any retry-after); the engine adds its own reasons. Whether the
 * step runs again is not stored here: the retry policy (`mayRetryStep`) derives it from the reason.
 */
export interface StepFailure {
  reason: StepFailureReason;
  message: string;
  /** A paid submission may or may not have been accepted: never sent again automatically. */
  outcomeUnknown: boolean;
  taskId?: string;
  cause?: GatewayFailure;
  /** A stop came before the item's task was sent: nothing is in flight, and the item did not run. */
  notSubmitted?: true;
}

/** A failure of the engine's own (not the gateway's), whose outcome is known. */
export const stepFailure = (
  reason: StepFailureReason,
  message: string,
  extra: { taskId?: string } = {},
): StepFailure => ({
  reason,
  message,
  outcomeUnknown: false,
  ...extra,
});

/** The same, as the failed Result a runner returns. */
export const failed = (reason: StepFailureReason, message: string, extra: { taskId?: string } = {}) =>
  err(stepFailure(reason, message, extra));

/** Why a step or an item did not run or end: the run was stopped (Ctrl-C, SIGTERM). */
export const RUN_STOPPED = 'the run was stopped';

export const interrupted = (message = RUN_STOPPED): StepFailure => stepFailure('interrupted', message);

/** The run was stopped before the item's task was sent: the item did not run (and a resume runs it). */
export const stoppedBeforeSubmission = (): StepFailure => ({
  ...interrupted('the run was stopped before this task was submitted'),
  notSubmitted: true,
});

/**
 * What to check before a paid request whose outcome is unknown is sent again: a submission made a
 * task (listed only in the gateway's dashboard), a text call only a charge on the balance.
 */
export const toCheckBeforeResending = (made: 'task' | 'call'): string =>
  made === 'task'
    ? "tasks in the gateway's dashboard (its API lists none)"
    : 'balance (`pipeline account`; a text call makes no task)';

export function fromGateway(failure: GatewayFailure, context: string, made: 'task' | 'call' = 'task'): StepFailure {
  const balance = made === 'task' ? ' and its balance (`pipeline account`)' : '';
  const advice =
    `Check the team's ${toCheckBeforeResending(made)}${balance} before running it again; ` +
    '`pipeline resume` will not send it again unless asked to with --resubmit-unknown';
  const message =
    failure.reason === 'outcome-unknown'
      ? `${context}: ${failure.message}. ${advice}`
      : `${context}: ${failure.message}`;
  return { reason: failure.reason, message, outcomeUnknown: failure.outcomeUnknown, cause: failure };
}

/** What went wrong with a paid request, without the "may or may not have been accepted" wrapping. */
export const underlyingMessage = (failure: GatewayFailure): string =>
  failure.reason === 'outcome-unknown' ? failure.cause.message : failure.message;
