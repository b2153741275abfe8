import { randomUUID } from 'node:crypto';
import type { TaskResult } from '../gateway/types.js';
import { ok, type Result } from '../result.js';
import type { RunItemRef } from '../item-label.js';
import type { EngineContext } from './context.js';
import { emit } from './emit.js';
import type { StepFailure } from './failure.js';

/**
 * What the run records of a model task, whoever sends and polls it (this process, or a worker for
 * a coordinator): the same events (so the same journal lines and console lines), spend and learned
 * durations either way, so `runs`, `resume` and the report cannot tell the two apart.
 */

/** A model item as its records name it. */
export interface TaskItem {
  row: number;
  step: { id: string };
  index: number;
  slug: string;
  /** The model's type (text-to-image, …): how its time grows with the input. */
  type: string;
  /** `image` or `image[3]`, as messages name it. */
  label: string;
  /** The item as the run's events name it. */
  ref: RunItemRef;
}

/**
 * Before a paid submission can leave (from this process, or from a worker once its job is queued):
 * its price reserved under the run's cap (an item over the cap, or after a 402, is never sent), and
 * `request-sent` on disk, so that a kill from then on leaves a trace of the paid request. Answers the
 * request's id and its price when known.
 */
export async function recordPaidRequest(
  ctx: EngineContext,
  item: TaskItem,
  input: Record<string, unknown>,
): Promise<Result<{ request: string; costUsd: number | undefined }, StepFailure>> {
  const reserved = ctx.spend ? ctx.spend.reserve(item.slug, input, item.label) : ok({} as { costUsd?: number });
  if (!reserved.ok) return reserved;
  const { costUsd } = reserved.value;
  const request = randomUUID();
  // The journal answers once the line is on disk.
  await emit(ctx, {
    type: 'request-sent',
    item: item.ref,
    slug: item.slug,
    request,
    ...(costUsd !== undefined ? { costUsd } : {}),
  });
  return ok({ request, costUsd });
}

/**
 * The gateway gave the submission a task: `task-submitted` with what was asked (long strings cut);
 * `how` it is known: `sent` now, or `recalled` from a worker's records on resume.
 */
export function recordSubmitted(
  ctx: EngineContext,
  item: TaskItem,
  request: string,
  taskId: string,
  journaledInput: Record<string, unknown> | undefined,
  how: 'sent' | 'recalled' = 'sent',
): void {
  emit(ctx, { type: 'task-submitted', item: item.ref, slug: item.slug, request, taskId, input: journaledInput, how });
}

/**
 * The submission certainly created nothing (refused by the gateway, or withdrawn before it left):
 * its reserved price is released, and a 402 stops every submission after it.
 */
export function recordRefused(
  ctx: EngineContext,
  item: TaskItem,
  refusal: { reason: string; message?: string },
  costUsd: number | undefined,
  journaledInput?: Record<string, unknown>,
): void {
  emit(ctx, {
    type: 'submission-refused',
    item: item.ref,
    reason: refusal.reason,
    ...(journaledInput ? { input: journaledInput } : {}),
  });
  ctx.spend?.release(costUsd);
  if (refusal.reason === 'insufficient-balance') ctx.spend?.stopForBalance(refusal.message ?? '');
}

/**
 * The task ended: `task-finished`, and a success teaches the model's time (the gateway's own
 * processing time or submit-to-end when it says, else since `submittedAt` on this clock) and, for
 * a task the gateway queued at its submission, how long the queue held it.
 */
export function recordTaskEnded(
  ctx: EngineContext,
  item: TaskItem,
  input: Record<string, unknown>,
  ended: { taskId: string; result: TaskResult; polls: number; submittedAt: number; queued?: boolean },
): void {
  const { taskId, result, polls } = ended;
  emit(ctx, { type: 'task-finished', item: item.ref, taskId, result, polls });
  // A task from before a resume (submittedAt 0) has no submission time on this clock: only the
  // gateway's own times can teach its model's time.
  const seen = {
    queued: ended.queued ?? false,
    ...(ended.submittedAt > 0 ? { elapsedMs: ctx.clock.now() - ended.submittedAt } : {}),
  };
  ctx.durations.observeEnded(item.slug, item.type, input, result, seen);
}
