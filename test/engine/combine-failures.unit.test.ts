import { describe, expect, it } from 'vitest';
import { stepFailure, type StepFailure } from '../../src/engine/failure.js';
import { combineFailures } from '../../src/engine/items.js';
import type { PlannedStep } from '../../src/plan.js';

const step = { id: 'image' } as PlannedStep;
const unknown = (index: number): { index: number; failure: StepFailure } => ({
  index,
  failure: { reason: 'outcome-unknown', message: `submission of image[${index}] was lost`, outcomeUnknown: true },
});
const taskFailed = (index: number) => ({
  index,
  failure: stepFailure('task-failed', `task of image[${index}] failed`),
});

describe('combineFailures: one failure for a step whose items failed', () => {
  it('the first item to fail speaks for the step when no outcome is unknown', () => {
    expect(combineFailures(step, [taskFailed(4), taskFailed(1)])).toEqual(taskFailed(4).failure);
  });

  it('a single unknown outcome is kept as it is, even when it was not the first failure', () => {
    expect(combineFailures(step, [taskFailed(2), unknown(5)]).message).toBe(
      'submission of image[5] was lost. 1 other item failed too, the first with: task of image[2] failed',
    );
    expect(combineFailures(step, [unknown(5)])).toEqual(unknown(5).failure);
  });

  it('several unknown outcomes are counted and all named, in item order', () => {
    const combined = combineFailures(step, [unknown(7), unknown(3), taskFailed(1), unknown(12)]);
    expect(combined).toMatchObject({ reason: 'outcome-unknown', outcomeUnknown: true });
    expect(combined.message).toBe(
      '3 submissions have unknown outcomes: image[3], image[7], image[12]. The first: submission of image[3] was lost.' +
        ' 1 other item failed too, the first with: task of image[1] failed',
    );
  });

  it('a step that failed without a failed item is a bug', () => {
    expect(() => combineFailures(step, [])).toThrow(/^Internal error/);
  });
});
