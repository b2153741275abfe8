import type { GatewayClock } from './clock.js';

export interface RateLimitVerdict {
  allowed: boolean;
  headers: { 'X-RateLimit-Limit': string; 'X-RateLimit-Remaining': string; 'X-RateLimit-Reset': string };
  /** Whole seconds until the window resets, at least 1; what a 429 message and Retry-After quote. */
  retryAfterSeconds: number;
}

/**
 * Fixed windows per API key, aligned to multiples of the window length since the epoch,
 * so that `X-RateLimit-Reset` (Unix seconds) is exact. A refused request does not use quota.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; used: number }>();

  constructor(
    private readonly clock: GatewayClock,
    readonly limit: number,
    readonly windowSeconds: number,
  ) {}

  take(key: string): RateLimitVerdict {
    const now = this.clock.now();
    const windowMs = this.windowSeconds * 1000;
    const start = Math.floor(now / windowMs) * windowMs;
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      window = { start, used: 0 };
      this.windows.set(key, window);
    }
    const allowed = window.used < this.limit;
    if (allowed) window.used++;
    const resetMs = start + windowMs;
    return {
      allowed,
      headers: {
        'X-RateLimit-Limit': String(this.limit),
        'X-RateLimit-Remaining': String(this.limit - window.used),
        'X-RateLimit-Reset': String(Math.ceil(resetMs / 1000)),
      },
      retryAfterSeconds: Math.max(1, Math.ceil((resetMs - now) / 1000)),
    };
  }

  /** The 429 message the hosted gateway sends: `Rate limit exceeded: 100 requests per minute, retry after 60 seconds`. */
  refusalDetail(retryAfterSeconds: number): string {
    const per = this.windowSeconds === 60 ? 'minute' : `${this.windowSeconds} seconds`;
    return `${this.limit} requests per ${per}, retry after ${retryAfterSeconds} seconds`;
  }
}
