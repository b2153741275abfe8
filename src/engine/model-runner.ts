import { randomUUID } from 'node:crypto';
import { extname, join } from 'node:path';
import { validateModelInput } from '../model-schemas/validate.js';
import type { PlannedStep } from '../plan.js';
import type { Resource, TaskResult } from '../gateway/types.js';
import { itemKey } from '../store/replay.js';
import type { EngineContext } from './context.js';
import { fromGateway, failWith } from './failure.js';
import { waitForTask } from './poller.js';
import { prepareMediaInputs } from './media-inputs.js';
import { taskPriority } from './priorities.js';

/** What a media model's step gives to later steps (recipe-language.md, Outputs of each action). */
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

const EXTENSIONS: Record<string, string> = { jpeg: 'jpg', 'image/jpeg': 'jpg', 'image/png': 'png', 'video/mp4': 'mp4' };

/**
 * One run of a model step: the input checked against the live schema, local files uploaded, the
 * submission journaled durably before it is sent, the task polled within its concurrency slot,
 * and every resource downloaded as soon as the task ends.
 */
export async function runModel(ctx: EngineContext, row: number, step: PlannedStep, index: number, rawInput: Record<string, unknown>, signal: AbortSignal): Promise<ModelOutputs> {
  const slug = step.model!.slug;
  const type = step.model!.type;
  const input = await prepareMediaInputs(ctx, step, rawInput, signal);
  const schema = ctx.modelSchema(slug);
  const problems = schema ? validateModelInput(schema, input) : [];
  if (problems.length > 0) {
    failWith({ reason: 'invalid-input', message: `the input to ${slug} is not valid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, retryable: false, outcomeUnknown: false });
  }
  const key = itemKey(row, step.id, index);
  const label = `${step.id}${step.forEach ? `[${index}]` : ''}`;
  const resumed = ctx.resume?.submittedTasks.get(key);
  // Used once: if that task failed and the step retries, the retry submits afresh.
  if (resumed) ctx.resume!.submittedTasks.delete(key);
  let taskId = resumed?.taskId;
  if (!taskId && ctx.resume?.unansweredSubmissions.has(key) && !ctx.resubmitUnknown) {
    failWith({ reason: 'outcome-unknown', message: `the submission of ${label} to ${slug} was in flight when the run stopped; it may have created a task. Check the team's tasks, then resume with --resubmit-unknown to send it again`, retryable: false, outcomeUnknown: true });
  }
  const result = await ctx.tasks.add(
    async (): Promise<TaskResult> => {
      // A task from before a resume is read at once: it may have ended long ago.
      let submittedAt = resumed ? 0 : ctx.clock.now();
      if (!taskId) {
        if (signal.aborted) failWith({ reason: 'interrupted', message: 'the run was stopped before this task was submitted', retryable: false, outcomeUnknown: false });
        const request = randomUUID();
        // On disk before the POST leaves: a kill after this line leaves a trace of the paid request.
        await ctx.journal.appendDurable({ type: 'request-sent', row, step: step.id, index, slug, request });
        // No signal: a submission that has left is seen through to its answer, so that a stop
        // (Ctrl-C, a step timeout) never turns a known outcome into an unknown one.
        const submitted = await ctx.client.submit(slug, input, ctx.webhook ? { webhookUrl: ctx.webhook.url } : {});
        if (!submitted.ok) {
          if (!submitted.error.outcomeUnknown) ctx.journal.append({ type: 'submission-refused', row, step: step.id, index, reason: submitted.error.reason });
          return failWith(fromGateway(submitted.error, `submission of ${label} to ${slug}`));
        }
        taskId = submitted.value.taskId;
        submittedAt = ctx.clock.now();
        ctx.journal.append({ type: 'task-submitted', row, step: step.id, index, slug, request, task_id: taskId });
        ctx.report.taskSubmitted(label, taskId);
      }
      const id = taskId;
      const delivered = ctx.webhook?.expect(id);
      try {
        const { result, polls } = await waitForTask(ctx.client, ctx.clock, id, {
          expectedMs: ctx.durations.expected(slug, type, input),
          firstPollMs: ctx.durations.firstPoll(slug, type, input),
          submittedAt,
          maxIntervalMs: ctx.plan.settings.pollMs,
          signal,
          ...(delivered ? { delivered } : {}),
        });
        ctx.log.info({ task: id, step: label, status: result.status, polls }, 'task ended');
        ctx.journal.append({ type: 'task-finished', row, step: step.id, index, task_id: id, status: result.status, duration_ms: result.durationMs ?? null, result_expires_at: result.resultExpiresAt ?? null });
        const elapsed = result.submitTime !== undefined && result.endTime !== undefined ? result.endTime - result.submitTime : ctx.clock.now() - submittedAt;
        if (result.state === 'succeeded') ctx.durations.observe(slug, type, input, elapsed);
        return result;
      } finally {
        ctx.webhook?.forget(id);
      }
    },
    { signal, priority: taskPriority(ctx.plan, step.id) },
  );
  if (result.state === 'failed') {
    failWith({ reason: 'task-failed', message: `task ${result.taskId} of ${label} ended ${result.status}: ${result.error?.message ?? 'no reason given'}`, retryable: true, outcomeUnknown: false, taskId: result.taskId });
  }
  return downloadOutputs(ctx, row, step, index, result, signal);
}

/** Downloads every resource into the run's outputs (results expire), and shapes the step's outputs. */
async function downloadOutputs(ctx: EngineContext, row: number, step: PlannedStep, index: number, result: TaskResult, signal: AbortSignal): Promise<ModelOutputs> {
  const prefix = `${ctx.plan.rows.length > 1 ? `row-${row + 1}-` : ''}${step.id}${step.forEach ? `-${index + 1}` : ''}`;
  const resources = await Promise.all(
    result.resources.map(async (resource, n) => {
      const guessed = resource.format ?? extname(new URL(resource.url).pathname).slice(1);
      const extension = (EXTENSIONS[guessed] ?? guessed.replace(/[^a-z0-9]/gi, '').slice(0, 5)) || 'bin';
      const path = join(ctx.outputsDir, `${prefix}${result.resources.length > 1 ? `-${n + 1}` : ''}.${extension}`);
      const expect = ['image', 'video', 'audio'].includes(resource.type) ? resource.type : undefined;
      const saved = await ctx.client.download(resource.url, path, expect ? { expect } : {}, signal);
      if (!saved.ok) return failWith({ ...fromGateway(saved.error, `download of ${resource.url}`), taskId: result.taskId });
      ctx.downloads.set(resource.url, { path, expiresAt: result.resultExpiresAt ?? null });
      ctx.journal.append({ type: 'output-written', row, step: step.id, index, task_id: result.taskId, url: resource.url, path, bytes: saved.value.bytes });
      return { ...resource, path };
    }),
  );
  const primary = resources.find((r) => r.role === 'primary' || r.role === undefined) ?? resources[0];
  return {
    task_id: result.taskId,
    resources,
    images: resources.filter((r) => r.type === 'image'),
    videos: resources.filter((r) => r.type === 'video'),
    audio: resources.filter((r) => r.type === 'audio'),
    url: primary?.url ?? null,
    path: primary?.path ?? null,
    metadata: result.metadata,
  };
}
