import { unreachable } from '../result.js';
import type { FailureReason, GatewayFailure } from './failures.js';

/**
 * The one retry policy: which failures are tried again, for a single request (`mayRetry`, used
 * by the client) and for a whole step (`mayRetryStep`, used by the engine), and how long to wait.
 * Both follow one rule for money: a paid submission is sent again only when the gateway certainly
 * refused it; when its outcome is unknown, never.
 *
 * Request classes:
 * - `read`: task results, lists, balances, deletes. Any retryable failure: 429, 5xx, network, timeouts.
 * - `submit`: a paid model submission. Only where the gateway certainly refused it: 429, or a
 *   connection that never opened. Anything else leaves its outcome unknown.
 * - `call`: tool and text-gateway calls and uploads. They create no task, but a text call is billed
 *   by the token and an upload uses quota: 429, 503, and a connection that never opened.
 */
export type RequestClass = 'read' | 'submit' | 'call';

export interface RetryPolicy {
  /** Attempts in all, the first included. Default 6. */
  maxAttempts: number;
  /** First backoff wait. Default 500 ms. */
  baseDelayMs: number;
  /** Longest backoff wait. Default 30 s. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 30_000 };

const neverOpened = (failure: GatewayFailure) =>
  failure.reason === 'connection-failed' || (failure.reason === 'timeout' && failure.phase === 'connect');

export function mayRetry(kind: RequestClass, failure: GatewayFailure): boolean {
  if (failure.reason === 'rate-limited' || neverOpened(failure)) return true;
  switch (kind) {
    case 'read':
      return failure.retryable;
    case 'submit':
      return false;
    case 'call':
      return failure.reason === 'unavailable';
  }
}

/**
 * How long to wait before attempt `attempt + 1`: until the reset a 429 named (plus up to 10 %
 * jitter, at most a second), else exponential backoff with full jitter, capped.
 */
export function retryDelay(
  failure: GatewayFailure,
  attempt: number,
  policy: RetryPolicy,
  random: () => number,
): number {
  if (failure.reason === 'rate-limited')
    return failure.retryAfterMs + random() * Math.min(1000, failure.retryAfterMs * 0.1);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.max(failure.retryAfterMs ?? 0, ceiling / 2 + (random() * ceiling) / 2);
}

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

/** How long to wait before retry `attempt` (0 for the first) of a step: the recipe's backoff, doubling. */
export function stepRetryDelay(backoffMs: number, attempt: number): number {
  return backoffMs * 2 ** attempt;
}
