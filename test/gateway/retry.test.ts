import { describe, expect, it } from 'vitest';
import {
  abortedFailure,
  downloadFailure,
  forSubmission,
  httpFailure,
  localFileFailure,
  malformedResponse,
  networkFailure,
  timeoutFailure,
  type GatewayFailure,
} from '../../src/gateway/failures.js';
import {
  DEFAULT_RETRY,
  mayRetry,
  mayRetryStep,
  retryDelay,
  stepRetryDelay,
  type RequestClass,
  type StepOwnReason,
} from '../../src/gateway/retry.js';

/** One failure of every gateway reason, and whether each request class may send it again. */
const REQUEST_CASES: Array<[string, GatewayFailure, Record<RequestClass, boolean>]> = [
  ['400', httpFailure(400, 'Invalid parameters: n', undefined), { read: false, submit: false, call: false }],
  ['401', httpFailure(401, 'Authentication failed', undefined), { read: false, submit: false, call: false }],
  ['402', httpFailure(402, 'Insufficient balance', undefined), { read: false, submit: false, call: false }],
  ['404', httpFailure(404, 'Not found', undefined), { read: false, submit: false, call: false }],
  ['413', httpFailure(413, 'Payload too large', undefined), { read: false, submit: false, call: false }],
  ['429', httpFailure(429, 'Rate limited', 2000), { read: true, submit: true, call: true }],
  ['500', httpFailure(500, 'Internal server error', undefined), { read: true, submit: false, call: false }],
  ['503', httpFailure(503, 'Service unavailable', undefined), { read: true, submit: false, call: true }],
  ['408 (http-error)', httpFailure(408, 'Request timeout', undefined), { read: true, submit: false, call: false }],
  ['501 (http-error)', httpFailure(501, 'Not implemented', undefined), { read: false, submit: false, call: false }],
  [
    'connection never opened',
    networkFailure('connection-failed', 'ECONNREFUSED'),
    { read: true, submit: true, call: true },
  ],
  [
    'connection dropped',
    networkFailure('connection-dropped', 'socket closed'),
    { read: true, submit: false, call: false },
  ],
  ['connect timeout', timeoutFailure('connect', 100), { read: true, submit: true, call: true }],
  ['headers timeout', timeoutFailure('headers', 100), { read: true, submit: false, call: false }],
  ['body timeout', timeoutFailure('body', 100), { read: true, submit: false, call: false }],
  ['malformed response', malformedResponse(200, 'junk'), { read: true, submit: false, call: false }],
  ['outcome unknown', forSubmission(httpFailure(500, 'boom', undefined)), { read: false, submit: false, call: false }],
  ['aborted', abortedFailure(false), { read: false, submit: false, call: false }],
  ['local file', localFileFailure('/x.png', 'missing'), { read: false, submit: false, call: false }],
  ['download failed', downloadFailure('http://x/y', 'wrong type'), { read: false, submit: false, call: false }],
];

describe('mayRetry: which requests are sent again', () => {
  it.each(REQUEST_CASES)('%s', (_name, failure, expected) => {
    expect({
      read: mayRetry('read', failure),
      submit: mayRetry('submit', failure),
      call: mayRetry('call', failure),
    }).toEqual(expected);
  });
});

describe('mayRetryStep: which failed steps run again', () => {
  it.each(REQUEST_CASES)('a step that failed on a gateway %s', (_name, failure) => {
    // A step is retried exactly when the failure is transient and nothing paid is in doubt.
    const facts = { reason: failure.reason, outcomeUnknown: failure.outcomeUnknown, cause: failure };
    expect(mayRetryStep(facts)).toBe(failure.retryable && !failure.outcomeUnknown);
  });

  const own: Array<[StepOwnReason, boolean]> = [
    ['task-failed', true],
    ['invalid-output', true],
    ['command-failed', true],
    ['invalid-input', false],
    ['expression', false],
    ['step-timeout', false],
    ['interrupted', false],
  ];
  it.each(own)('a step that failed with %s: %s', (reason, expected) => {
    expect(mayRetryStep({ reason, outcomeUnknown: false })).toBe(expected);
  });

  it('never when an outcome is unknown, whatever the reason says', () => {
    expect(mayRetryStep({ reason: 'task-failed', outcomeUnknown: true })).toBe(false);
    expect(mayRetryStep({ reason: 'outcome-unknown', outcomeUnknown: true })).toBe(false);
  });

  it('an unnamed status without its cause is not retried', () => {
    expect(mayRetryStep({ reason: 'http-error', outcomeUnknown: false })).toBe(false);
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

  it("a step's retry waits the recipe's backoff, doubling", () => {
    expect([0, 1, 2].map((attempt) => stepRetryDelay(1000, attempt))).toEqual([1000, 2000, 4000]);
  });
});
