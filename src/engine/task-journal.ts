import { randomUUID } from 'node:crypto';
import type { TaskResult } from '../gateway/types.js';
import { ok, type Result } from '../result.js';
import type { EngineContext } from './context.js';
import type { StepFailure } from './failure.js';

/**
 * What the run records of a model task, whoever sends and polls it (this process, or a worker for
 * a coordinator): the same journal lines, console lines, spend and learned durations either way,
 * so `runs`, `resume` and the report cannot tell the two apart.
 */

/** A model item as its records name it. */
export interface TaskItem {
  row: number;
  step: { id: string };
  index: number;
  slug: string;
  /** The model's type (text-to-image, …): how its time grows with the input. */
  type: string;
  /** `image` or `image[3]`. */
  label: string;
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
  await ctx.journal.appendDurable({
    type: 'request-sent',
    row: item.row,
    step: item.step.id,
    index: item.index,
    slug: item.slug,
    request,
    ...(costUsd !== undefined ? { cost_usd: costUsd } : {}),
  });
  return ok({ request, costUsd });
}

/**
 * The gateway gave the submission a task: `task-submitted` with what was asked (long strings cut),
 * and the console's line unless `announce` is false (a resume says it its own way).
 */
export function recordSubmitted(
  ctx: EngineContext,
  item: TaskItem,
  request: string,
  taskId: string,
  journaledInput: Record<string, unknown> | undefined,
  { announce } = { announce: true },
): void {
  const { row, index, slug } = item;
  ctx.journal.append({
    type: 'task-submitted',
    row,
    step: item.step.id,
    index,
    slug,
    request,
    task_id: taskId,
    input: journaledInput,
  });
  if (announce) ctx.report.taskSubmitted(item.label, taskId);
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
): void {
  ctx.journal.append({
    type: 'submission-refused',
    row: item.row,
    step: item.step.id,
    index: item.index,
    reason: refusal.reason,
  });
  ctx.spend?.release(costUsd);
  if (refusal.reason === 'insufficient-balance') ctx.spend?.stopForBalance(refusal.message ?? '');
}

/**
 * The task ended: `task-finished`, and a success teaches the model's time (the gateway's own
 * submit-to-end when it says, else since `submittedAt` on this clock).
 */
export function recordTaskEnded(
  ctx: EngineContext,
  item: TaskItem,
  input: Record<string, unknown>,
  ended: { taskId: string; result: TaskResult; polls: number; submittedAt: number },
): void {
  const { taskId, result, polls } = ended;
  ctx.log.info({ task: taskId, step: item.label, status: result.status, polls }, 'task ended');
  ctx.journal.append({
    type: 'task-finished',
    row: item.row,
    step: item.step.id,
    index: item.index,
    task_id: taskId,
    status: result.status,
    duration_ms: result.durationMs ?? null,
    result_expires_at: result.resultExpiresAt ?? null,
    polls,
    ...(result.error ? { error: result.error.message } : {}),
  });
  const elapsed =
    result.submitTime !== undefined && result.endTime !== undefined
      ? result.endTime - result.submitTime
      : ctx.clock.now() - ended.submittedAt;
  if (result.state === 'succeeded') ctx.durations.observe(item.slug, item.type, input, elapsed);
}
