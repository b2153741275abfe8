import type { RequestPurpose } from '../gateway/gate.js';

/** A request waiting for the budget to grant it: resolved with its release, or rejected when its signal aborts. */
export interface Waiter {
  resolve: (release: () => void) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  purpose: RequestPurpose;
}

/** The order of purposes in the queue: a waiter goes behind every waiter of its rank or a lower one. */
const RANK: Record<RequestPurpose, number> = { 'task-read': 0, submit: 1, other: 2 };

/**
 * Queues a request for a grant and lets the budget `pump`; a waiter whose signal aborts leaves the
 * queue and rejects with the signal's reason. Both budgets, in process and on Redis, wait this way.
 * Reads of tasks in flight queue first, then submissions, then the rest, each in order of arrival.
 */
export function waitForGrant(
  waiters: Waiter[],
  signal: AbortSignal | undefined,
  pump: () => void,
  purpose: RequestPurpose = 'other',
): Promise<() => void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const waiter: Waiter = {
      resolve,
      reject,
      signal,
      purpose,
      onAbort: () => {
        const index = waiters.indexOf(waiter);
        if (index >= 0) waiters.splice(index, 1);
        reject(signal!.reason);
      },
    };
    signal?.addEventListener('abort', waiter.onAbort, { once: true });
    if (purpose === 'other') waiters.push(waiter);
    else waiters.splice(placeFor(waiters, RANK[purpose]), 0, waiter);
    pump();
  });
}

/** Behind the last waiter of rank `rank` or lower: waiters are kept in rank order. */
function placeFor(waiters: readonly Waiter[], rank: number): number {
  let index = 0;
  while (index < waiters.length && RANK[waiters[index]!.purpose] <= rank) index++;
  return index;
}
