import type { FailureReason, GatewayFailure } from '../gateway/failures.js';
import { unreachable } from '../result.js';

/**
 * Why a step can fail besides the gateway's own reasons: a task that ended failed, an input the
 * model's schema refused at run time, an answer that broke the step's schema, an expression that
 * could not be evaluated, a command's exit code, the step's time limit, and a stop asked for by
 * the user, and a submission held back because it would pass the run's spending cap.
 */
export type StepOwnReason =
  | 'task-failed'
  | 'invalid-input'
  | 'invalid-output'
  | 'expression'
  | 'command-failed'
  | 'step-timeout'
  | 'interrupted'
  | 'spend-cap';

export type StepFailureReason = FailureReason | StepOwnReason;

/** What the step decision reads of a step's failure. */
export interface StepRetryFacts {
  reason: StepFailureReason;
  outcomeUnknown: boolean;
  /** The gateway's failure behind it, when there is one. */
  cause?: GatewayFailure;
}

/**
 * Whether a failed step may run again (within the recipe's `retry.attempts`). Never when a paid
 * submission's outcome is unknown. A failure the same input would meet again (a refusal, a bad
 * input, a missing file) is not retried; one that may pass on another try (a failed task, an
 * answer that broke the schema, a command's exit code, a transient gateway failure) is.
 */
export function mayRetryStep(failure: StepRetryFacts): boolean {
  if (failure.outcomeUnknown) return false;
  const reason = failure.reason;
  switch (reason) {
    case 'task-failed':
    case 'invalid-output':
    case 'command-failed':
    case 'rate-limited':
    case 'server-error':
    case 'unavailable':
    case 'connection-failed':
    case 'connection-dropped':
    case 'timeout':
    case 'malformed-response':
      return true;
    case 'http-error':
      // An unnamed status: retried as its request would be (408 and 5xx other than 501).
      return failure.cause?.retryable ?? false;
    case 'invalid-parameters':
    case 'unauthorized':
    case 'insufficient-balance':
    case 'not-found':
    case 'payload-too-large':
    case 'outcome-unknown':
    case 'aborted':
    case 'local-file':
    case 'download-failed':
    case 'invalid-input':
    case 'expression':
    case 'step-timeout':
    case 'interrupted':
    // The cap is the same on another try: only a resume with a higher cap goes on.
    case 'spend-cap':
      return false;
    default:
      return unreachable(reason);
  }
}

/** The longest wait between two attempts of a step, however many attempts the recipe allows. */
export const MAX_STEP_BACKOFF_MS = 10 * 60_000;

/**
 * How long to wait before retry `attempt` (0 for the first) of a step: the recipe's backoff,
 * doubling, at most ten minutes (ten attempts from 30 s would otherwise wait over four hours).
 */
export function stepRetryDelay(backoffMs: number, attempt: number): number {
  return Math.min(MAX_STEP_BACKOFF_MS, backoffMs * 2 ** attempt);
}
