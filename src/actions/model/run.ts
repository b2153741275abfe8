import { runModel } from '../../engine/model-runner.js';
import type { ModelStep } from '../../plan.js';
import type { ActionRun } from '../run-part.js';
import { renderWith } from '../run-kit.js';

/**
 * A model item: a task submitted and polled within a task slot (on a worker with `--workers`, which
 * the model runner arranges itself: the submission's record stays here).
 */
export const modelRun: ActionRun<ModelStep> = {
  render: renderWith,
  // Items queued behind the concurrency limit have not started: the time limit counts from the slot.
  timedFromSlot: true,
  onWorkers: () => true,
  run: ({ ctx, row, step, index, signal, started }, input) =>
    runModel(ctx, row, step, index, input as Record<string, unknown>, signal, started),
  cache: {
    keyAction: (step) => `model ${step.model.slug}`,
    inputHasFields: true,
    answeredByGateway: true,
    // A task's submission, one read and each download.
    cost: (files) => ({ tasks: 1, requests: 2 + files }),
    restoresFiles: true,
  },
};
