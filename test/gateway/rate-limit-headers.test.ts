import { describe, expect, it } from 'vitest';
import { parseRateLimit } from '../../src/gateway/rate-limit-headers.js';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);
const NOW_S = NOW / 1000;

describe('parseRateLimit', () => {
  it('reads every header of an answer', () => {
    const observation = parseRateLimit(
      200,
      { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '37', 'x-ratelimit-reset': String(NOW_S + 42) },
      NOW,
    );
    expect(observation).toEqual({ status: 200, observedAt: NOW, limit: 100, remaining: 37, resetAt: NOW + 42_000 });
  });

  it('leaves out what is missing', () => {
    expect(parseRateLimit(200, {}, NOW)).toEqual({ status: 200, observedAt: NOW });
    expect(parseRateLimit(200, { 'x-ratelimit-remaining': '0' }, NOW)).toEqual({
      status: 200,
      observedAt: NOW,
      remaining: 0,
    });
  });

  it('ignores garbage, fractions and negative numbers', () => {
    const headers = {
      'x-ratelimit-limit': 'lots',
      'x-ratelimit-remaining': '-3',
      'x-ratelimit-reset': '12.5',
      'retry-after': 'soon',
    };
    expect(parseRateLimit(200, headers, NOW)).toEqual({ status: 200, observedAt: NOW });
  });

  it('takes the first of a repeated header and tolerates spaces', () => {
    expect(parseRateLimit(200, { 'x-ratelimit-limit': [' 60 ', '120'] }, NOW).limit).toBe(60);
  });

  it('reads the reset as Unix seconds, Unix milliseconds, or seconds from now', () => {
    expect(parseRateLimit(200, { 'x-ratelimit-reset': String(NOW_S + 30) }, NOW).resetAt).toBe(NOW + 30_000);
    expect(parseRateLimit(200, { 'x-ratelimit-reset': String(NOW + 30_000) }, NOW).resetAt).toBe(NOW + 30_000);
    expect(parseRateLimit(200, { 'x-ratelimit-reset': '30' }, NOW).resetAt).toBe(NOW + 30_000);
  });

  it('Retry-After in seconds', () => {
    expect(parseRateLimit(429, { 'retry-after': '7' }, NOW).retryAfterMs).toBe(7_000);
    expect(parseRateLimit(429, { 'retry-after': '0' }, NOW).retryAfterMs).toBe(0);
  });

  it('Retry-After as an HTTP date, and a date already past waits nothing', () => {
    const later = new Date(NOW + 90_000).toUTCString();
    expect(parseRateLimit(429, { 'retry-after': later }, NOW).retryAfterMs).toBe(90_000);
    const earlier = new Date(NOW - 90_000).toUTCString();
    expect(parseRateLimit(429, { 'retry-after': earlier }, NOW).retryAfterMs).toBe(0);
  });

  it('a 429 without Retry-After waits until the reset; a reset in the past waits nothing', () => {
    expect(parseRateLimit(429, { 'x-ratelimit-reset': String(NOW_S + 12) }, NOW).retryAfterMs).toBe(12_000);
    expect(parseRateLimit(429, { 'x-ratelimit-reset': String(NOW_S - 12) }, NOW)).toMatchObject({
      resetAt: NOW - 12_000,
      retryAfterMs: 0,
    });
    expect(
      parseRateLimit(429, { 'retry-after': 'soon', 'x-ratelimit-reset': String(NOW_S + 5) }, NOW).retryAfterMs,
    ).toBe(5_000);
  });

  it('an answer that is not a 429 gets no wait from the reset alone', () => {
    expect(parseRateLimit(200, { 'x-ratelimit-reset': String(NOW_S + 12) }, NOW).retryAfterMs).toBeUndefined();
  });

  it('Retry-After wins over the reset', () => {
    expect(parseRateLimit(429, { 'retry-after': '3', 'x-ratelimit-reset': String(NOW_S + 50) }, NOW).retryAfterMs).toBe(
      3_000,
    );
  });
});
