import { describe, expect, it } from 'vitest';
import { httpFailure } from '../../src/gateway/failures.js';
import { DEFAULT_RETRY, mayRetry, retryDelay } from '../../src/gateway/retry.js';
import { REQUEST_CASES } from '../support/gateway-failures.js';

describe('mayRetry: which requests are sent again', () => {
  it.each(REQUEST_CASES)('%s', (_name, failure, expected) => {
    expect({
      read: mayRetry('read', failure),
      submit: mayRetry('submit', failure),
      call: mayRetry('call', failure),
    }).toEqual(expected);
    expect(mayRetry('paid-call', failure)).toBe(expected.call);
  });
});

describe('retryDelay', () => {
  const rateLimited = httpFailure(429, 'Rate limited', 4000);

  it('after a 429 waits until the reset it named, plus up to 10 % jitter capped at a second', () => {
    expect(retryDelay(rateLimited, 1, DEFAULT_RETRY, () => 0)).toBe(4000);
    expect(retryDelay(rateLimited, 1, DEFAULT_RETRY, () => 0.5)).toBe(4200);
    expect(retryDelay(httpFailure(429, 'Rate limited', 60_000), 3, DEFAULT_RETRY, () => 0.999)).toBeCloseTo(60_999, 0);
  });

  it('a 429 without a reset waits a minute', () => {
    expect(retryDelay(httpFailure(429, '', undefined), 1, DEFAULT_RETRY, () => 0)).toBe(60_000);
  });

  it('otherwise backs off exponentially with full jitter in the upper half, capped', () => {
    const failure = httpFailure(503, 'Service unavailable', undefined);
    const policy = { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 3000 };
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelay(failure, attempt, policy, () => 0))).toEqual([
      250, 500, 1000, 1500, 1500,
    ]);
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelay(failure, attempt, policy, () => 0.999999))).toEqual(
      [500, 1000, 2000, 3000, 3000].map((v) => expect.closeTo(v, 0)),
    );
  });

  it('never waits less than a Retry-After the gateway sent with a 503', () => {
    expect(retryDelay(httpFailure(503, 'busy', 7000), 1, DEFAULT_RETRY, () => 0)).toBe(7000);
  });
});
