/** A request waiting for the budget to grant it: resolved with its release, or rejected when its signal aborts. */
export interface Waiter {
  resolve: (release: () => void) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * Queues a request for a grant and lets the budget `pump`; a waiter whose signal aborts leaves the
 * queue and rejects with the signal's reason. Both budgets, in process and on Redis, wait this way.
 */
export function waitForGrant(
  waiters: Waiter[],
  signal: AbortSignal | undefined,
  pump: () => void,
): Promise<() => void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const waiter: Waiter = {
      resolve,
      reject,
      signal,
      onAbort: () => {
        const index = waiters.indexOf(waiter);
        if (index >= 0) waiters.splice(index, 1);
        reject(signal!.reason);
      },
    };
    signal?.addEventListener('abort', waiter.onAbort, { once: true });
    waiters.push(waiter);
    pump();
  });
}
