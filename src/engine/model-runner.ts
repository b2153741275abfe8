import { AsyncResource } from 'node:async_hooks';
import { downloadResources, type SavedResource } from '../gateway/resource-downloads.js';
import { isPending, type Resource, type TaskResult } from '../gateway/types.js';
import { meantText, validateModelInput } from '../model-schemas/validate.js';
import { type ModelStep, outputFilePrefix } from '../plan.js';
import { err, ok, type Result } from '../result.js';
import { waitForTask } from '../scheduler/poller.js';
import { itemKey } from '../store/replay.js';
import { inputForJournal } from './journal-input.js';
import type { EngineContext } from './context.js';
import { recordPaidRequest, recordRefused, recordSubmitted, recordTaskEnded, type TaskItem } from './task-journal.js';
import { emit } from './emit.js';
import { itemOf } from './events.js';
import {
  failed,
  fromGateway,
  interrupted,
  type StepFailure,
  stoppedBeforeSubmission,
  underlyingMessage,
} from './failure.js';
import { earlierOutcomeUnknown } from './paid-call.js';
import { prepareMediaInputs } from './media-inputs.js';
import { recallSubmission, submitAndWaitRemotely } from './remote-model.js';
import { taskPriority } from './priorities.js';
import { recordDownload } from './row-downloads.js';
import { itemLabel } from '../item-label.js';
import type { TaskReads } from '../scheduler/read-forecast.js';

/** What a media model's step gives to later steps: the task, its files (downloaded), its metadata. */
export interface ModelOutputs {
  task_id: string;
  resources: Array<Resource & { path: string }>;
  images: Array<Resource & { path: string }>;
  videos: Array<Resource & { path: string }>;
  audio: Array<Resource & { path: string }>;
  url: string | null;
  path: string | null;
  metadata: Record<string, unknown>;
}

type Input = Record<string, unknown>;

/** One item of a model step, as the functions below name and record it. */
interface ModelItem extends TaskItem {
  step: ModelStep;
}

/**
 * One run of a model step: the input checked against the live schema, local files uploaded, the
 * submission journaled durably before it is sent, the task polled within its concurrency slot,
 * and every resource downloaded as soon as the task ends.
 */
export async function runModel(
  ctx: EngineContext,
  row: number,
  step: ModelStep,
  index: number,
  rawInput: Input,
  signal: AbortSignal,
  /** Called when the item takes its task slot: where its own time limit begins. */
  started?: () => void,
): Promise<Result<ModelOutputs, StepFailure>> {
  const item: ModelItem = {
    row,
    step,
    index,
    slug: step.model.slug,
    type: step.model.type,
    label: itemLabel({ step: step.id, index: step.forEach ? index : undefined }),
    ref: itemOf(row, step, index),
  };
  const prepared = await prepareMediaInputs(ctx, step, rawInput, signal);
  if (!prepared.ok) return prepared;
  const input = prepared.value;
  const schema = ctx.modelSchema(item.slug);
  const problems = schema ? validateModelInput(schema, input) : [];
  if (problems.length > 0)
    return failed(
      'invalid-input',
      `the input to ${item.slug} is not valid: ${problems.map((p) => `${p.field} ${p.message}${meantText(p)}`).join('; ')}`,
    );
  const recalled = ctx.remote ? await recallSubmission(ctx, ctx.remote, item, inputForJournal(input)) : undefined;
  const resumed = recalled ? ok(recalled.taskId) : resumedTask(ctx, item);
  if (!resumed.ok) return resumed;
  // No signal for the queue: p-queue rejects a running operation at once when its signal aborts,
  // which would let the run end while a submission that has left is still unanswered and turn a
  // known outcome into an unknown one. Waiting items start, see the stop, and return at once.
  const inSlot = () => {
    started?.();
    return submitAndWait(ctx, item, input, resumed.value, signal);
  };
  let ended: Result<TaskResult, StepFailure>;
  if (ctx.remote?.takes(step)) {
    // On workers, each worker's --concurrency caps its tasks in flight, not this process's task slots.
    started?.();
    ended = await submitAndWaitRemotely(
      ctx,
      ctx.remote,
      item,
      input,
      resumed.value,
      signal,
      inputForJournal(input),
      (taskId) => submitAndWait(ctx, item, input, taskId, signal),
    );
  }
  // p-queue starts a waiting item from the task whose end freed the slot: bound, the item keeps
  // its own step's context, and the requests it makes count to that step (ctx.withinStep).
  else {
    const { rowProgress } = ctx;
    rowProgress?.taskReady(row, ctx.durations.expected(item.slug, item.type, input));
    const slotted = rowProgress ? () => rowProgress.inSlot(row, inSlot) : inSlot;
    ended = await ctx.tasks.add(ctx.withinStep ? AsyncResource.bind(slotted) : slotted, {
      priority: taskPriority(ctx.plan, step.id, step.forEach ? index : undefined),
    });
  }
  if (!ended.ok) return ended;
  const result = ended.value;
  if (result.state === 'failed') {
    // A task the gateway failed for its parameters fails the same way again: not a task-failed to retry.
    const invalid = result.error?.message?.startsWith('Invalid parameters') === true;
    return failed(
      invalid ? 'invalid-parameters' : 'task-failed',
      `task ${result.taskId} of ${item.label} ended ${result.status}: ${result.error?.message ?? 'no reason given'}`,
      { taskId: result.taskId },
    );
  }
  return downloadOutputs(ctx, item, result, signal);
}

/**
 * The task an earlier run submitted for this item, to be read rather than submitted again; or
 * nothing. A submission of the earlier run whose outcome is unknown is not sent again unless the
 * user asked for it, and the message says which of the two it was: in flight at a kill, or an
 * answer lost while the run went on.
 */
function resumedTask(ctx: EngineContext, item: ModelItem): Result<string | undefined, StepFailure> {
  const key = itemKey(item.row, item.step.id, item.index);
  const submitted = ctx.resume?.submittedTasks.get(key);
  // Used once: if that task failed and the step retries, the retry submits afresh.
  if (submitted) {
    ctx.resume!.submittedTasks.delete(key);
    return ok(submitted.taskId);
  }
  const unknown = earlierOutcomeUnknown(
    ctx,
    key,
    `the submission of ${item.label} to ${item.slug}`,
    'it may have created a task',
  );
  return unknown.ok ? ok(undefined) : unknown;
}

/** Within a task slot: submits (unless resuming a task), then waits for the task to end. */
async function submitAndWait(
  ctx: EngineContext,
  item: ModelItem,
  input: Input,
  resumedTaskId: string | undefined,
  signal: AbortSignal,
): Promise<Result<TaskResult, StepFailure>> {
  const expectedReads = ctx.reads?.task();
  try {
    // A task from before a resume is read at once: it may have ended long ago.
    if (resumedTaskId) return await awaitTask(ctx, item, input, resumedTaskId, 0, signal, expectedReads);
    // The task will need a read, perhaps soon (its schedule is known once it is submitted): counted
    // from now, so that no spare read of another task takes the room it may need.
    if (!ctx.webhook) expectedReads?.expect(ctx.clock.now());
    const submitted = await submit(ctx, item, input, signal);
    if (!submitted.ok) return submitted;
    const { taskId, queued } = submitted.value;
    return await awaitTask(ctx, item, input, taskId, ctx.clock.now(), signal, expectedReads, queued);
  } finally {
    expectedReads?.end();
  }
}

/** Sends the paid submission, journaled durably first; the task's id, and whether the gateway queued it. */
async function submit(
  ctx: EngineContext,
  item: ModelItem,
  input: Input,
  signal: AbortSignal,
): Promise<Result<{ taskId: string; queued: boolean }, StepFailure>> {
  if (signal.aborted) return err(stoppedBeforeSubmission());
  const { slug } = item;
  const recorded = await recordPaidRequest(ctx, item, input);
  if (!recorded.ok) return recorded;
  const { request, costUsd } = recorded.value;
  // No signal: a submission that has left is seen through to its answer, so that a stop
  // (Ctrl-C, a step timeout) never turns a known outcome into an unknown one.
  const submitted = await ctx.client.submit(slug, input, ctx.webhook ? { webhookUrl: ctx.webhook.url } : {});
  if (!submitted.ok) {
    const failure = submitted.error;
    // What was asked goes with it: the report's card of the item shows the prompt it was refused for.
    const asked = inputForJournal(input);
    if (failure.outcomeUnknown)
      emit(ctx, {
        type: 'submission-unknown',
        item: item.ref,
        request,
        message: underlyingMessage(failure),
        input: asked,
      });
    else recordRefused(ctx, item, failure, costUsd, asked);
    return err(fromGateway(failure, `submission of ${item.label} to ${slug}`));
  }
  const taskId = submitted.value.taskId;
  recordSubmitted(ctx, item, request, taskId, inputForJournal(input));
  return ok({ taskId, queued: isPending(submitted.value.status) });
}

/** Polls (or takes the webhook's delivery) until the task ends, and learns how long it took. */
async function awaitTask(
  ctx: EngineContext,
  item: ModelItem,
  input: Input,
  taskId: string,
  submittedAt: number,
  signal: AbortSignal,
  expectedReads: TaskReads | undefined,
  queued = false,
): Promise<Result<TaskResult, StepFailure>> {
  const { slug, type } = item;
  const delivered = ctx.webhook?.expect(taskId);
  // A task from before a resume (submittedAt 0) has held a place since a time unknown: from now, for the replay.
  const resumed = submittedAt === 0;
  const expectedMs = ctx.durations.expected(slug, type, input);
  const place = ctx.places?.add(resumed ? ctx.clock.now() : submittedAt, queued, expectedMs);
  let endedAt: number | undefined;
  let done = () => {};
  try {
    const polling = ctx.durations.pollSchedule(slug, type, input, {
      now: ctx.clock.now(),
      submittedAt,
      maxIntervalMs: ctx.plan.settings.pollMs,
      webhook: delivered !== undefined,
      queued,
      ...(place ? { place } : {}),
    });
    done = polling.done;
    const waited = await waitForTask(ctx.client, ctx.clock, taskId, {
      ...polling.schedule,
      signal,
      ...(delivered ? { delivered } : {}),
      ...(expectedReads ? { expectedReads } : {}),
      ...(ctx.hasSpareRoom ? { hasSpareRoom: ctx.hasSpareRoom } : {}),
    });
    if (!waited.ok) {
      if (signal.aborted) return err(interrupted());
      return err({ ...fromGateway(waited.error, `reading task ${taskId}`), taskId });
    }
    const { result, polls } = waited.value;
    endedAt = (resumed ? undefined : endedAtGateway(result, submittedAt)) ?? ctx.clock.now();
    recordTaskEnded(ctx, item, input, { taskId, result, polls, submittedAt, queued });
    return ok(result);
  } finally {
    // Not read to its end (a stop, a failed read, a timeout): the gateway, told nothing, runs it still.
    if (endedAt !== undefined) place?.ended(endedAt);
    else place?.abandoned();
    done();
    ctx.webhook?.forget(taskId);
  }
}

/**
 * When a task ended on this process's clock, by the gateway's own figures: its end counted from its
 * submission, as the gateway's clock may differ from this one but not its durations (the end comes
 * out late by the submission's time on the wire); undefined where the gateway does not tell them.
 */
function endedAtGateway(result: TaskResult, submittedAt: number): number | undefined {
  const { submitTime, endTime } = result;
  return submitTime !== undefined && endTime !== undefined ? submittedAt + endTime - submitTime : undefined;
}

/** Downloads every resource into the run's outputs (results expire), and shapes the step's outputs. */
async function downloadOutputs(
  ctx: EngineContext,
  item: ModelItem,
  result: TaskResult,
  signal: AbortSignal,
): Promise<Result<ModelOutputs, StepFailure>> {
  const { row, step, index } = item;
  const prefix = outputFilePrefix(ctx.plan.rows, row, step, index);
  const saved = await downloadResources(ctx.client, result, {
    dir: ctx.outputsDir,
    name: (n, count, extension) => `${prefix}${count > 1 ? `-${n + 1}` : ''}.${extension}`,
    onSaved: (file: SavedResource) => {
      recordDownload(ctx, row, file.url, { path: file.path, expiresAt: result.resultExpiresAt ?? null });
      const written = { taskId: result.taskId, url: file.url, path: file.path, bytes: file.bytes };
      emit(ctx, { type: 'output-written', item: item.ref, ...written });
    },
    signal,
  });
  if (!saved.ok) {
    // Stopped while downloading: the task is paid and done, and a resume downloads its files again.
    if (signal.aborted)
      return err({ ...interrupted('the run was stopped while its files were downloaded'), taskId: result.taskId });
    return err({ ...fromGateway(saved.error.failure, `download of ${saved.error.url}`), taskId: result.taskId });
  }
  const resources = saved.value.map(({ bytes: _bytes, ...resource }) => resource);
  if (result.metadata?.render === 'passthrough') {
    // The built-in gateway found no ffmpeg: the clip is the input video, not a rendering of the request.
    emit(ctx, { type: 'clip-passed-through', item: item.ref });
  }
  const primary = resources.find((r) => r.role === 'primary' || r.role === undefined) ?? resources[0];
  return ok({
    task_id: result.taskId,
    resources,
    images: resources.filter((r) => r.type === 'image'),
    videos: resources.filter((r) => r.type === 'video'),
    audio: resources.filter((r) => r.type === 'audio'),
    url: primary?.url ?? null,
    path: primary?.path ?? null,
    metadata: result.metadata,
  });
}
