import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import {
  MAX_STEP_BACKOFF_MS,
  mayRetryStep,
  RETRYABLE_REASONS,
  stepRetryDelay,
  type StepOwnReason,
} from '../../src/engine/step-retry.js';
import { REQUEST_CASES } from '../support/gateway-failures.js';

describe('mayRetryStep: which failed steps run again', () => {
  it.each(REQUEST_CASES)('a step that failed on a gateway %s', (_name, failure) => {
    // A step is retried exactly when the failure is transient and nothing paid is in doubt.
    const facts = { reason: failure.reason, outcomeUnknown: failure.outcomeUnknown, cause: failure };
    expect(mayRetryStep(facts)).toBe(failure.retryable && !failure.outcomeUnknown);
  });

  it('retries a connection not opened that a worker recorded, which has no request to ask', () => {
    expect(mayRetryStep({ reason: 'connection-failed', outcomeUnknown: false })).toBe(true);
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

  it('never for a reason the step lists as non-retryable, and as by default for the others', () => {
    expect(mayRetryStep({ reason: 'task-failed', outcomeUnknown: false }, ['task-failed'])).toBe(false);
    expect(mayRetryStep({ reason: 'command-failed', outcomeUnknown: false }, ['task-failed'])).toBe(true);
    expect(mayRetryStep({ reason: 'invalid-input', outcomeUnknown: false }, ['task-failed'])).toBe(false);
  });

  it('lets a recipe name exactly the reasons retried by default (the recipe schema lists them)', () => {
    const schema = JSON.parse(readFileSync(new URL('../../schemas/recipe.schema.json', import.meta.url), 'utf8'));
    const find = (node: unknown): unknown[] | undefined => {
      if (!node || typeof node !== 'object') return undefined;
      const record = node as Record<string, unknown>;
      const listed = (record.non_retryable as { items?: { enum?: unknown[] } } | undefined)?.items?.enum;
      return (
        listed ??
        Object.values(record)
          .map(find)
          .find((found) => found !== undefined)
      );
    };
    expect(find(schema)?.toSorted()).toEqual(RETRYABLE_REASONS.toSorted());
    expect(RETRYABLE_REASONS).not.toContain('outcome-unknown');
  });

  it('an unnamed status without its cause is not retried', () => {
    expect(mayRetryStep({ reason: 'http-error', outcomeUnknown: false })).toBe(false);
  });
});

describe('stepRetryDelay', () => {
  it("waits the recipe's backoff, doubling, at most ten minutes", () => {
    expect([0, 1, 2].map((attempt) => stepRetryDelay(1000, attempt))).toEqual([1000, 2000, 4000]);
    expect(stepRetryDelay(30_000, 9)).toBe(MAX_STEP_BACKOFF_MS);
    expect(stepRetryDelay(30_000, 4)).toBe(480_000);
  });
});
