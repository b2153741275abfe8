import { describe, expect, it } from 'vitest';
import { formatLimit, parseDuration } from '../../src/duration.js';

describe('formatLimit', () => {
  it('writes a limit or a wait in its largest whole unit, as a recipe would', () => {
    expect([500, 100, 1000, 90_000, 60_000, 30 * 60_000, 2 * 3_600_000, 86_400_000].map(formatLimit)).toEqual([
      '500ms',
      '100ms',
      '1s',
      '90s',
      '1m',
      '30m',
      '2h',
      '1d',
    ]);
  });

  it('gives back what a recipe wrote, read by parseDuration', () => {
    for (const text of ['500ms', '15m', '45s', '3h', '7d']) expect(formatLimit(parseDuration(text)!)).toBe(text);
  });
});
