/**
 * Time as the local gateway sees it. Every window, processing time and expiry goes
 * through this interface so that tests can pass a manual clock instead of sleeping.
 */
export interface GatewayClock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `callback` once `ms` milliseconds have passed on this clock. */
  setTimer(ms: number, callback: () => void): GatewayTimer;
  clearTimer(timer: GatewayTimer): void;
}

export interface GatewayTimer {
  readonly id: unknown;
}

const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export const systemClock: GatewayClock = {
  now: () => Date.now(),
  setTimer(ms, callback) {
    const timer: { id: NodeJS.Timeout | undefined } = { id: undefined };
    // setTimeout fires at once past 2^31-1 ms (about 24.8 days), so long waits are re-armed in steps.
    const arm = (remaining: number) => {
      const step = Math.min(Math.max(0, remaining), MAX_TIMEOUT_MS);
      timer.id = setTimeout(() => (remaining > MAX_TIMEOUT_MS ? arm(remaining - MAX_TIMEOUT_MS) : callback()), step);
      // A pending task or expiry timer must not keep a closed process alive.
      timer.id.unref();
    };
    arm(ms);
    return timer;
  },
  clearTimer(timer) {
    clearTimeout((timer as { id: NodeJS.Timeout | undefined }).id);
  },
};
