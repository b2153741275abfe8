/**
 * `pipeline run --workers URL`: the run keeps its analyzer, plan, journal, cache and report, and
 * queues the items of the steps workers take as BullMQ jobs. It hears of each job's task id
 * (progress) and end through BullMQ's events, and reads the jobs themselves every few seconds in
 * case an event was missed. It watches the workers' heartbeats: with items waiting and no worker
 * alive for SILENCE_MS, it says so (the run can be stopped and resumed later).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Job, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { interrupted, stepFailure, type StepFailure } from '../engine/failure.js';
import type { CommandJob, ModelJob, ModelJobEnd, RemoteAction, RemoteItem, RemoteItems } from '../engine/remote.js';
import { runnerOf } from '../actions/runners.js';
import type { PlannedStep } from '../plan.js';
import { err, ok, type Result } from '../result.js';
import { RedisBlobs } from './blobs.js';
import { workersAlive } from './heartbeats.js';
import { openRecord, retire } from './submission-record.js';
import { gatewayCalls } from '../actions/gateway-calls.js';
import type { StepFailureReason } from '../engine/step-retry.js';
import {
  type CommandAnswer,
  DEFAULT_QUEUE,
  type JobAnswer,
  type JobData,
  type JobFile,
  type PassedOn,
  SILENCE_MS,
  submissionKey,
} from './jobs.js';

export interface CoordinatorOptions {
  redisUrl: string;
  shownUrl: string;
  queue: string;
  runId: string;
  /** The gateway base URL the workers must use too. */
  gateway: string;
  /** `settings.pass_env` of the recipe, for `run:` items. */
  passEnv: string[];
  /** One line for the person watching the run. */
  note: (line: string) => void;
  /** How long without a live worker, items waiting, before saying so. */
  silenceMs?: number;
  /** How often the jobs and heartbeats are read. */
  sweepMs?: number;
}

/** How a job ended, as this side sees it. */
type Settled =
  | { kind: 'answered'; answer: JobAnswer }
  | { kind: 'failed'; message: string }
  | { kind: 'withdrawn' }
  | { kind: 'interrupted'; progress: unknown };

interface Pending {
  resolve(settled: Settled): void;
  /** A model job's submission record: what a withdrawal must end. */
  recordKey?: string;
  onProgress(progress: unknown): void;
  waitingSince: number;
  /** In Redis (its record, then the job, written): a job not found there after this was lost. */
  queued?: boolean;
}

/** Answers once Redis does, or throws after a few seconds (BullMQ's connections would wait forever). */
export async function reachable(redis: Redis, ms = 5000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${ms / 1000}s`)), ms);
      }),
    ]);
  } catch (error) {
    redis.disconnect();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

const connection = (url: string) => {
  const redis = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: (times) => Math.min(200 * times, 2000) });
  redis.on('error', () => {});
  return redis;
};

/** How often a resume reads a submission record a live worker is still sending. */
const SETTLE_READ_MS = 200;

export class Coordinator implements RemoteItems {
  private readonly pending = new Map<string, Pending>();
  private readonly blobs: RedisBlobs;
  private readonly redis: Redis;
  private readonly sweeper: NodeJS.Timeout;
  private silentSince: number | undefined;
  private warned = false;
  /** Redis went away with items queued there: said once, and again when it is back. */
  private redisLost = false;
  private closing = false;

  private constructor(
    private readonly options: CoordinatorOptions,
    private readonly connections: Redis[],
    private readonly queue: Queue<JobData, JobAnswer>,
    private readonly events: QueueEvents,
  ) {
    this.redis = connections[0]!;
    this.blobs = new RedisBlobs(this.redis);
    events.on('progress', ({ jobId, data }) => this.heard(jobId, data));
    events.on('completed', ({ jobId, returnvalue }) =>
      this.settle(jobId, { kind: 'answered', answer: returnvalue as unknown as JobAnswer }),
    );
    events.on('failed', ({ jobId, failedReason }) => this.settle(jobId, { kind: 'failed', message: failedReason }));
    events.on('error', () => {});
    // Without a word here the run would only show the budget's warning, and seem to stall.
    this.redis.on('close', () => {
      if (this.closing || this.redisLost || this.pending.size === 0) return;
      this.redisLost = true;
      options.note(
        `⚠ lost Redis at ${options.shownUrl}: ${this.pending.size === 1 ? 'the item queued there waits' : `the ${this.pending.size} items queued there wait`} for it to come back`,
      );
    });
    this.redis.on('ready', () => {
      if (!this.redisLost) return;
      this.redisLost = false;
      options.note(`Redis at ${options.shownUrl} is back: the queued items go on`);
    });
    this.sweeper = setInterval(() => void this.sweep().catch(() => {}), options.sweepMs ?? 5_000);
  }

  static async open(options: CoordinatorOptions): Promise<Coordinator> {
    const redis = connection(options.redisUrl);
    await reachable(redis);
    // BullMQ leaves connections it is given open when it closes: this class closes them (`owned`).
    const owned = [connection(options.redisUrl), connection(options.redisUrl)] as const;
    const queue = new Queue<JobData, JobAnswer>(options.queue, { connection: owned[0] });
    queue.on('error', () => {});
    const events = new QueueEvents(options.queue, { connection: owned[1] });
    // Listening before the first job is queued: no end can come before the listener.
    await events.waitUntilReady();
    return new Coordinator(options, [redis, ...owned], queue, events);
  }

  /** As the step's action says (model, LLM and web items always; a `run:` item when it says `runs_on: worker`; uploads never). */
  takes(step: PlannedStep): boolean {
    return runnerOf(step).onWorkers(step);
  }

  async model(job: ModelJob, onSubmitted: (taskId: string) => void, signal: AbortSignal): Promise<ModelJobEnd> {
    /** The task the worker said it created: known here even if Redis later loses the job and its record. */
    let heard: string | undefined;
    const told = (progress: unknown) => {
      const taskId = (progress as { task_id?: unknown } | undefined)?.task_id;
      if (typeof taskId !== 'string') return;
      heard = taskId;
      onSubmitted(taskId);
    };
    const recordKey = submissionKey(this.options.queue, job.request);
    const data: JobData = { kind: 'model', ...this.base(), job };
    const settled = await this.enqueue(job.request, data, told, signal, recordKey);
    switch (settled.kind) {
      case 'answered':
        return settled.answer as ModelJobEnd;
      case 'withdrawn':
        return { kind: 'withdrawn' };
      case 'interrupted': {
        const taskId = (settled.progress as { task_id?: unknown } | undefined)?.task_id;
        return typeof taskId === 'string' ? { kind: 'interrupted', taskId } : { kind: 'interrupted' };
      }
      case 'failed':
        return this.lostModelJob(job, settled.message, heard);
    }
  }

  /**
   * A model job BullMQ failed (not answered): what its submission record says happened, ended there
   * if nothing was sent. A task the record or the worker's word (`heard`) names is read here: the
   * task exists, and its outcome is not unknown because its job was lost.
   */
  private async lostModelJob(job: ModelJob, message: string, heard: string | undefined): Promise<ModelJobEnd> {
    const record = await retire(this.redis, submissionKey(this.options.queue, job.request));
    const why = `the job of ${job.label} failed on its worker: ${message}`;
    const orphaned = (taskId: string): ModelJobEnd => {
      this.options.note(`${job.label}: ${message}; its task ${taskId} is read from this process`);
      return { kind: 'orphaned', taskId };
    };
    switch (record.state) {
      case 'withdrawn':
      case 'mine':
        return { kind: 'refused', failure: stepFailure('server-error', `${why}; nothing was submitted`) };
      case 'submitted':
        return orphaned(record.taskId);
      case 'refused':
        return { kind: 'refused', failure: stepFailure(record.reason as StepFailureReason, record.message) };
      case 'submitting':
      case 'unknown': {
        // The record was lost or never finished, but the worker told of its task: it exists.
        if (heard !== undefined) return orphaned(heard);
        const failure: StepFailure = {
          ...stepFailure('outcome-unknown', `${why}; it may have created a task`),
          outcomeUnknown: true,
        };
        return { kind: 'unknown', message: why, failure };
      }
    }
  }

  /**
   * The submission record of `request`, ended here if nothing was sent, once no live worker is
   * sending it. A worker whose POST is on the wire (the record `submitting`, its job's lock alive:
   * a resume right after a coordinator was killed meets this while the workers go on) writes the
   * task id, the refusal or `unknown` within its request's time: until then the outcome is not
   * unknown, only not known yet. A lost worker's lock lapses after its --takeover-after.
   */
  private async settledRecord(request: string) {
    const key = submissionKey(this.options.queue, request);
    for (;;) {
      const record = await retire(this.redis, key);
      const sending = record.state === 'submitting' && (await this.redis.exists(this.queue.toKey(`${request}:lock`)));
      if (!sending) return record;
      await new Promise((resolve) => setTimeout(resolve, SETTLE_READ_MS));
    }
  }

  async recall(
    request: string,
  ): Promise<{ kind: 'submitted'; taskId: string } | { kind: 'unsent' } | { kind: 'unknown' }> {
    // Off the queue first if it is still there; then the record ends here unless something was sent.
    const job = await Job.fromId(this.queue, request);
    if (job && !job.finishedOn) await job.remove().catch(() => {});
    const record = await this.settledRecord(request);
    if (record.state === 'submitted') return { kind: 'submitted', taskId: record.taskId };
    if (record.state === 'withdrawn' || record.state === 'refused') return { kind: 'unsent' };
    return { kind: 'unknown' };
  }

  async action(
    item: RemoteItem,
    action: RemoteAction,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Result<unknown, StepFailure>> {
    const id = `${this.options.runId}-${item.row}-${item.step}-${item.index}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    // A call that may be paid (not idempotent) has a submission record, as a model job does.
    const recordKey = gatewayCalls[action].idempotent ? undefined : submissionKey(this.options.queue, id);
    const data: JobData = { kind: 'action', ...this.base(), item, action, input };
    const settled = await this.enqueue(id, data, () => {}, signal, recordKey);
    if (settled.kind === 'failed' && recordKey) {
      // A paid call whose job failed unanswered: sent or not, its record says; unknown is never retried.
      const record = await retire(this.redis, recordKey);
      if (record.state === 'submitting' || record.state === 'unknown')
        return err({
          ...stepFailure(
            'outcome-unknown',
            `the job of ${item.label} failed on its worker: ${settled.message}; it may have been answered (and paid)`,
          ),
          outcomeUnknown: true,
        });
    }
    return this.plainAnswer(settled, item);
  }

  async command(job: CommandJob, runDir: string, signal: AbortSignal): Promise<Result<unknown, StepFailure>> {
    const files: JobFile[] = [];
    for (const file of job.files) {
      const stored = await this.blobs.putFile(file.path);
      if (!stored.ok) return err(stepFailure('local-file', `${job.label}: ${stored.error}`));
      files.push({ value: file.value, sha256: stored.value, name: basename(file.path) });
    }
    const { files: _paths, ...item } = job;
    const id = `${this.options.runId}-${job.row}-${job.step}-${job.index}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const data: JobData = {
      kind: 'command',
      ...this.base(),
      item: { row: item.row, step: item.step, index: item.index, label: item.label },
      command: item.command,
      files,
      passEnv: this.options.passEnv,
    };
    const answer = await this.plainAnswer(await this.enqueue(id, data, () => {}, signal), job);
    if (!answer.ok) return answer;
    const { outputs, files: written } = answer.value as CommandAnswer;
    // The files the command wrote in its folder, where it would have written them here.
    for (const file of written) {
      const bytes = await this.blobs.get(file.sha256);
      if (!bytes.ok) return err(stepFailure('local-file', `${job.label}: ${bytes.error}`));
      const dest = join(runDir, file.path);
      if (!dest.startsWith(`${runDir}/`))
        return err(stepFailure('local-file', `${job.label}: ${file.path} is outside the run folder`));
      await mkdir(dirname(dest), { recursive: true });
      await writeFile(dest, bytes.value);
    }
    return ok(outputs);
  }

  private plainAnswer(settled: Settled, item: RemoteItem): Result<unknown, StepFailure> {
    switch (settled.kind) {
      case 'answered':
        return settled.answer as Result<unknown, StepFailure>;
      case 'failed':
        return err(stepFailure('server-error', `the job of ${item.label} failed on its worker: ${settled.message}`));
      case 'withdrawn':
      case 'interrupted':
        return err(interrupted());
    }
  }

  private base() {
    return { run: this.options.runId, gateway: this.options.gateway };
  }

  /** Queues a job and waits for its end; when `signal` aborts, withdraws it if no worker has it yet. */
  private enqueue(
    id: string,
    data: JobData,
    onProgress: (progress: unknown) => void,
    signal: AbortSignal,
    recordKey?: string,
  ): Promise<Settled> {
    return new Promise<Settled>((resolve) => {
      let queued = false;
      // Before the job is in Redis there is nothing to withdraw: it is withdrawn once it is.
      const onAbort = () => void (queued ? this.withdraw(id) : undefined);
      const pending: Pending = {
        resolve: (settled) => {
          signal.removeEventListener('abort', onAbort);
          resolve(settled);
        },
        onProgress,
        waitingSince: Date.now(),
        ...(recordKey ? { recordKey } : {}),
      };
      this.pending.set(id, pending);
      signal.addEventListener('abort', onAbort, { once: true });
      // The record first: a worker finding none knows Redis lost it, and sends nothing.
      (recordKey ? openRecord(this.redis, recordKey) : Promise.resolve())
        .then(() =>
          this.queue.add(data.kind, data, {
            jobId: id,
            attempts: 1,
            removeOnComplete: { age: 3600 },
            removeOnFail: { age: 7 * 24 * 3600 },
          }),
        )
        .then(
          () => {
            queued = true;
            pending.queued = true;
            if (signal.aborted) onAbort();
          },
          (error: Error) => this.settle(id, { kind: 'failed', message: `it could not be queued: ${error.message}` }),
        );
    });
  }

  /**
   * The run stopped: the job is taken off the queue if no worker holds it, and a model job's record
   * is ended unless its POST already left, so that no worker can send it later. Withdrawn when
   * nothing was sent; interrupted (with the task id, if known) otherwise.
   */
  private async withdraw(id: string): Promise<void> {
    const job = await Job.fromId(this.queue, id);
    const removed =
      !job ||
      (await job.remove().then(
        () => true,
        () => false,
      ));
    const recordKey = this.pending.get(id)?.recordKey;
    if (!recordKey)
      return this.settle(id, removed ? { kind: 'withdrawn' } : { kind: 'interrupted', progress: job?.progress });
    const record = await retire(this.redis, recordKey);
    if (record.state === 'withdrawn') return this.settle(id, { kind: 'withdrawn' });
    const progress = record.state === 'submitted' ? { task_id: record.taskId } : job?.progress;
    this.settle(id, { kind: 'interrupted', progress });
  }

  /** Why workers passed jobs on (another gateway), said once each: the jobs wait for another worker. */
  private readonly passedOn = new Set<string>();

  /** A job's progress: its task id, or a worker's reason to pass it on. */
  private heard(id: string, progress: unknown): void {
    const reason = (progress as Partial<PassedOn> | undefined)?.passed_on;
    if (typeof reason === 'string' && !this.passedOn.has(reason)) {
      this.passedOn.add(reason);
      this.options.note(`⚠ ${reason}; its jobs wait for another worker`);
    }
    this.pending.get(id)?.onProgress(progress);
  }

  private settle(id: string, settled: Settled): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    pending.resolve(settled);
  }

  /** Reads the jobs still pending (an event may have been missed) and whether any worker is alive. */
  private async sweep(): Promise<void> {
    if (this.pending.size === 0) {
      this.silentSince = undefined;
      return;
    }
    for (const [id, pending] of [...this.pending]) {
      const job = await Job.fromId(this.queue, id);
      if (!job) {
        // Queued, and gone: Redis lost it (a restart without its data). Its end is what its record says.
        if (pending.queued)
          this.settle(id, { kind: 'failed', message: 'its job is gone from Redis (restarted without its data?)' });
        continue;
      }
      if (job.progress && typeof job.progress === 'object') this.heard(id, job.progress);
      if (job.finishedOn && job.failedReason) this.settle(id, { kind: 'failed', message: job.failedReason });
      else if (job.finishedOn) this.settle(id, { kind: 'answered', answer: job.returnvalue });
    }
    const alive = await workersAlive(this.redis, this.options.queue);
    const now = Date.now();
    if (alive > 0) {
      if (this.warned) this.options.note(`a worker is back on queue '${this.options.queue}': the run goes on`);
      this.silentSince = undefined;
      this.warned = false;
      return;
    }
    this.silentSince ??= now;
    const silence = this.options.silenceMs ?? SILENCE_MS;
    if (!this.warned && now - this.silentSince >= silence && this.pending.size > 0) {
      this.warned = true;
      const seconds = Math.round((now - this.silentSince) / 1000);
      this.options.note(
        `⚠ no worker alive on queue '${this.options.queue}' at ${this.options.shownUrl} for ${seconds}s, ${this.pending.size} items waiting: start one (pipeline worker --redis URL${this.options.queue === DEFAULT_QUEUE ? '' : ` --queue ${this.options.queue}`}), or stop with Ctrl-C and resume the run later`,
      );
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    await this.events.close().catch(() => {});
    await this.queue.close().catch(() => {});
    for (const redis of this.connections) redis.disconnect();
  }
}
