import type { RequestGate } from '../gateway/gate.js';
import type { RateLimitListener } from '../gateway/rate-limit-headers.js';

/** What a budget believes now, for logs and tests. */
export interface BudgetSnapshot {
  limit: number | undefined;
  remaining: number | undefined;
  resetAt: number | undefined;
  unanswered: number;
  pausedUntil: number;
  waiting: number;
}

/**
 * The request budget of one API key: the client asks it before each request (`acquire`) and tells
 * it every answer's rate-limit headers (`observe`). Kept in this process (RateBudget) or shared by
 * every process on the key through Redis (RedisBudget).
 */
export interface Budget extends RequestGate {
  readonly observe: RateLimitListener;
  snapshot(): BudgetSnapshot;
  /**
   * Whether a request sent now would take room in the window that no request known or expected
   * needs (see RateBudget): spare reads go only then.
   */
  hasSpareRoom(): boolean;
  /** Lets go of timers and connections; requests already granted may still be released. */
  close(): Promise<void>;
}
