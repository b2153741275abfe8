/**
 * Time for the client and the scheduler. Every wait (backoff, rate-limit pauses, poll delays)
 * goes through it, so tests pass a manual clock and advance it instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  setTimer(ms: number, callback: () => void): ClockTimer;
  clearTimer(timer: ClockTimer): void;
}

export interface ClockTimer {
  readonly id: unknown;
}

const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, callback) {
    const timer: { id: NodeJS.Timeout | undefined } = { id: undefined };
    // setTimeout fires at once past 2^31-1 ms, so long waits are re-armed in steps.
    const arm = (remaining: number) => {
      timer.id = setTimeout(
        () => (remaining > MAX_TIMEOUT_MS ? arm(remaining - MAX_TIMEOUT_MS) : callback()),
        Math.min(Math.max(0, remaining), MAX_TIMEOUT_MS),
      );
    };
    arm(ms);
    return timer;
  },
  clearTimer(timer) {
    clearTimeout((timer as { id: NodeJS.Timeout | undefined }).id);
  },
};

/** Waits `ms` on `clock`; rejects with the signal's reason when it aborts first. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimer(timer);
      reject(signal!.reason);
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
