import type { GatewayFailure } from './failures.js';

/**
 * The request retry policy of the client: which failed requests are sent again, and how long to
 * wait (a whole step's retry is the engine's: src/engine/step-retry.ts). Both follow one rule for
 * money: a paid submission is sent again only when the gateway certainly refused it; when its
 * outcome is unknown, never.
 *
 * Request classes:
 * - `read`: task results, lists, balances, deletes. Any retryable failure: 429, 5xx, network, timeouts.
 * - `submit`: a paid model submission. Only where the gateway certainly refused it: 429, or a
 *   connection that never opened. Anything else leaves its outcome unknown.
 * - `call`: tool calls and uploads. They create no task, but an upload uses quota: 429, 503, and a
 *   connection that never opened.
 * - `paid-call`: a text-gateway call, billed by the token: retried as a `call`; a failure that ends
 *   it after it was sent may have been answered, and becomes `outcome-unknown` (forPaidCall).
 */
export type RequestClass = 'read' | 'submit' | 'call' | 'paid-call';

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
  // Never sent, so safe to send again; but not where sending again cannot help (a refused certificate).
  if (failure.reason === 'rate-limited' || (neverOpened(failure) && failure.retryable)) return true;
  switch (kind) {
    case 'read':
      return failure.retryable;
    case 'submit':
      return false;
    case 'call':
    case 'paid-call':
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
