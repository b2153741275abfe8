/**
 * A model item whose submission and polling a worker does (`pipeline run --workers`). The
 * coordinator journals it as it journals its own: `request-sent` durably before the job is queued
 * (a queued job may be sent at any moment), `task-submitted` as soon as the worker recorded the
 * task id in Redis, and the same ends as in one process, so `runs`, `resume` and the report are
 * unchanged.
 */
import { randomUUID } from 'node:crypto';
import type { TaskResult } from '../gateway/types.js';
import { err, ok, type Result, unreachable } from '../result.js';
import { itemKey } from '../store/replay.js';
import type { EngineContext } from './context.js';
import { emit } from './emit.js';
import { recordPaidRequest, recordRefused, recordSubmitted, recordTaskEnded, type TaskItem } from './task-journal.js';
import { interrupted, stoppedBeforeSubmission, type StepFailure } from './failure.js';
import type { RemoteItems } from './remote.js';

export async function submitAndWaitRemotely(
  ctx: EngineContext,
  remote: RemoteItems,
  item: TaskItem,
  input: Record<string, unknown>,
  resumedTaskId: string | undefined,
  signal: AbortSignal,
  /** The input as the journal keeps it (long strings cut). */
  journaledInput: Record<string, unknown> | undefined,
  /** Reads a task from this process until it ends: for a task whose job the workers lost. */
  readHere: (taskId: string) => Promise<Result<TaskResult, StepFailure>>,
): Promise<Result<TaskResult, StepFailure>> {
  if (signal.aborted) return err(stoppedBeforeSubmission());
  const { row, index, slug } = item;
  const step = item.step.id;
  let costUsd: number | undefined;
  let request: string = randomUUID();
  if (!resumedTaskId) {
    // On disk before the job is queued: from then on a worker may send it at any moment.
    const recorded = await recordPaidRequest(ctx, item, input);
    if (!recorded.ok) return recorded;
    ({ request, costUsd } = recorded.value);
  }
  let journaledTask = resumedTaskId;
  const onSubmitted = (taskId: string) => {
    if (journaledTask === taskId) return;
    journaledTask = taskId;
    recordSubmitted(ctx, item, request, taskId, journaledInput);
  };
  const submittedAt = ctx.clock.now();
  const end = await remote.model(
    {
      row,
      step,
      index,
      label: item.label,
      slug,
      input,
      request,
      ...(resumedTaskId ? { taskId: resumedTaskId } : {}),
      type: item.type,
      expectedMs: ctx.durations.expected(slug, item.type, input),
      ...optional('firstPollMs', ctx.durations.firstPoll(slug, item.type, input)),
      maxPollIntervalMs: ctx.plan.settings.pollMs,
    },
    onSubmitted,
    signal,
  );
  switch (end.kind) {
    case 'refused':
      // What was asked goes with it, as a local refusal's does: the report's card shows the prompt.
      recordRefused(ctx, item, end.failure, costUsd, journaledInput);
      return err(end.failure);
    case 'withdrawn':
      // Taken off the queue before any worker had it: certainly never sent.
      recordRefused(ctx, item, { reason: 'withdrawn' }, costUsd);
      return err(stoppedBeforeSubmission());
    case 'unknown':
      emit(ctx, {
        type: 'submission-unknown',
        item: item.ref,
        request,
        message: end.message,
        ...(journaledInput ? { input: journaledInput } : {}),
      });
      return err({ ...end.failure, outcomeUnknown: true });
    case 'interrupted':
      if (end.taskId) onSubmitted(end.taskId);
      return err(interrupted());
    case 'unread':
      onSubmitted(end.taskId);
      return err({ ...end.failure, taskId: end.taskId });
    case 'orphaned':
      // Journaled as submitted already (the worker told of it), or now; then read as a resume reads one.
      onSubmitted(end.taskId);
      return readHere(end.taskId);
    case 'ended':
      onSubmitted(end.taskId);
      recordTaskEnded(ctx, item, input, { taskId: end.taskId, result: end.result, polls: end.polls, submittedAt });
      return ok(end.result);
    default:
      return unreachable(end);
  }
}

const optional = <K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> =>
  value === undefined ? {} : ({ [key]: value } as Record<K, V>);

/**
 * On resume with workers: a submission the earlier coordinator journaled and never heard the
 * answer of (it was killed) is looked up in the workers' records before it is called unknown. A
 * task a worker recorded is polled; a job still queued is taken off and sent afresh. Answers the
 * task id to poll, `undefined` to submit, or nothing when the records cannot tell (the usual
 * outcome-unknown then applies).
 */
export async function recallSubmission(
  ctx: EngineContext,
  remote: RemoteItems,
  item: TaskItem,
  journaledInput: Record<string, unknown> | undefined,
): Promise<{ taskId: string | undefined } | undefined> {
  const key = itemKey(item.row, item.step.id, item.index);
  const unanswered = ctx.resume?.unansweredSubmissions.get(key);
  if (!unanswered || ctx.resume?.submittedTasks.has(key)) return undefined;
  const recalled = await remote.recall(unanswered.request);
  if (recalled.kind === 'unknown') return undefined;
  ctx.resume!.unansweredSubmissions.delete(key);
  if (recalled.kind === 'unsent') {
    // Nothing reserved for it in this run: the earlier run's reservation went with it.
    recordRefused(ctx, item, { reason: 'withdrawn' }, undefined);
    return { taskId: undefined };
  }
  recordSubmitted(ctx, item, unanswered.request, recalled.taskId, journaledInput, 'recalled');
  return { taskId: recalled.taskId };
}
