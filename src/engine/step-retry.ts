import type { FailureReason, GatewayFailure } from '../gateway/failures.js';

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
 * Whether a step that failed for a reason runs again (within the recipe's `retry.attempts`), as
 * data: `true` for a failure that may pass on another try (a failed task, an answer that broke the
 * schema, a command's exit code, a transient gateway failure), `false` for one the same input would
 * meet again (a refusal, a bad input, a missing file), `'as-its-request'` for an unnamed HTTP status
 * (retried as its request would be: 408 and 5xx other than 501). A connection not opened is retried
 * unless its request said no retry could help (a refused TLS certificate); one rebuilt from a
 * worker's record, which has no request, is retried.
 */
export const RETRIED_BY_DEFAULT: { readonly [R in StepFailureReason]: boolean | 'as-its-request' } = {
  'task-failed': true,
  'invalid-output': true,
  'command-failed': true,
  'rate-limited': true,
  'server-error': true,
  unavailable: true,
  'connection-failed': true,
  'connection-dropped': true,
  timeout: true,
  'malformed-response': true,
  'http-error': 'as-its-request',
  'invalid-parameters': false,
  unauthorized: false,
  'insufficient-balance': false,
  'not-found': false,
  'payload-too-large': false,
  'outcome-unknown': false,
  aborted: false,
  'local-file': false,
  'download-failed': false,
  'invalid-input': false,
  expression: false,
  'step-timeout': false,
  interrupted: false,
  // The cap is the same on another try: only a resume with a higher cap goes on.
  'spend-cap': false,
};

/** The reasons a step may name in `retry.non_retryable`: those retried unless it says so. */
export const RETRYABLE_REASONS = (Object.keys(RETRIED_BY_DEFAULT) as StepFailureReason[]).filter(
  (reason) => RETRIED_BY_DEFAULT[reason] !== false,
);

/**
 * Whether a failed step may run again: never when a paid submission's outcome is unknown, never
 * for a reason the step lists in `retry.non_retryable` (as Temporal's `nonRetryableErrorTypes`),
 * else as `RETRIED_BY_DEFAULT` says.
 */
export function mayRetryStep(failure: StepRetryFacts, nonRetryable: readonly string[] = []): boolean {
  if (failure.outcomeUnknown || nonRetryable.includes(failure.reason)) return false;
  const rule = RETRIED_BY_DEFAULT[failure.reason];
  if (failure.reason === 'connection-failed' && failure.cause?.retryable === false) return false;
  return rule === 'as-its-request' ? (failure.cause?.retryable ?? false) : rule;
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
