import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Accounts } from './accounts.js';
import type { BlobStore } from './blob-store.js';
import type { GatewayClock, GatewayTimer } from './clock.js';
import { notFound } from './errors.js';
import { TaskInputError, type ModelBehaviour, type ProduceContext, type ProducedOutput } from './models/behaviour.js';
import type { ResolvedGatewayOptions } from './options.js';
import type { GatewayRandom } from './random.js';
import type { GatewayStats } from './stats.js';
import type { ServedModel } from './model-catalog.js';
import { MODEL_BEHAVIOURS } from './models/index.js';
import { unitsOf } from '../model-schemas/prices.js';
import type { Records } from './records.js';
import { InputFetcher } from './task-inputs.js';
import type { WebhookSender } from './webhooks.js';

type TaskStatus = 'pending' | 'processing' | 'success' | 'failed';

/**
 * A task as kept between processes. A task that had not ended when its process stopped goes on
 * in the next one that is asked for it, as a hosted gateway's tasks go on while its client is away.
 */
export interface TaskRecord {
  id: string;
  team: string;
  slug: string;
  input: Record<string, unknown>;
  status: TaskStatus;
  submitTime: number;
  startTime?: number;
  endTime?: number;
  processingMs: number;
  chargedUnits: number;
  unitPriceUnits: number;
  /** Decided at submission so that `--seed` fixes which tasks fail, whatever the order of completion. */
  injectFailure: boolean;
  webhookUrl?: string;
  output?: TaskOutput;
  error?: { code: number; message: string };
  resultExpiresAt?: number;
  /** The gateway's address when the record was written: its links are moved to the address of the day. */
  origin: string;
}

/** What a successful task answers; its files are in the blob store under `resultTokens`. */
type TaskOutput = Omit<ProducedOutput, 'blobs'> & { resultTokens: string[] };

interface Task extends Omit<TaskRecord, 'origin'> {
  behaviour: ModelBehaviour;
  /** False for a task taken over from an earlier process: its charge was made there, so nothing is refunded here. */
  chargedHere: boolean;
  timer?: GatewayTimer;
}

export interface SubmitRequest {
  team: string;
  slug: string;
  input: Record<string, unknown>;
  behaviour: ModelBehaviour;
  model: ServedModel;
  webhookUrl?: string;
}

/**
 * Tasks from submission to expiry. Each team runs at most `maxConcurrent` tasks; the rest wait
 * in `pending`, first come first served. A task ends when both its processing time has passed
 * on the clock and its output files are written.
 */
export class TaskManager {
  private readonly tasks = new Map<string, Task>();
  private readonly waiting = new Map<string, Task[]>();
  private readonly runningCount = new Map<string, number>();
  private readonly settling = new Set<Promise<void>>();
  /** Tasks taken over mid-way from an earlier process: they end at their start plus their processing time. */
  private readonly resumedTasks = new Set<string>();
  private readonly expiryTimers = new Set<GatewayTimer>();
  private readonly inputs: InputFetcher;

  constructor(
    private readonly options: ResolvedGatewayOptions,
    private readonly clock: GatewayClock,
    private readonly random: GatewayRandom,
    private readonly accounts: Accounts,
    private readonly blobs: BlobStore,
    private readonly stats: GatewayStats,
    private readonly webhooks: WebhookSender,
    private readonly publicOrigin: () => string,
    private readonly records: Records<TaskRecord>,
  ) {
    this.inputs = new InputFetcher(blobs, publicOrigin);
  }

  /**
   * Charges the team and queues the task; throws 402 before anything is queued when the balance is
   * short. The task is recorded before it is answered: an acknowledged task outlives the process.
   */
  async submit(request: SubmitRequest): Promise<Task> {
    const priceUsd = this.options.prices[request.slug] ?? request.model.price.usd;
    const unitPriceUnits = Math.round(priceUsd * 10_000);
    const chargedUnits = unitsOf(request.model.price, request.input, request.model.schema);
    this.accounts.charge(request.team, Math.round(unitPriceUnits * chargedUnits));
    const jitter = 1 + this.options.latencyJitter * (2 * this.random.next() - 1);
    const task: Task = {
      id: `task_${this.random.hex(12)}`,
      team: request.team,
      slug: request.slug,
      input: request.input,
      behaviour: request.behaviour,
      status: 'pending',
      submitTime: this.clock.now(),
      processingMs: Math.round(request.behaviour.baseProcessingMs(request.input) * this.options.latencyScale * jitter),
      chargedUnits,
      unitPriceUnits,
      injectFailure: this.random.chance(this.options.failRate),
      chargedHere: true,
      ...(request.webhookUrl ? { webhookUrl: request.webhookUrl } : {}),
    };
    task.id = await this.unused(task.id);
    this.tasks.set(task.id, task);
    this.stats.taskSubmitted(request.slug);
    await this.save(task);
    this.enqueue(task);
    return task;
  }

  /** The task result body, or 404 for an unknown id, another team's task or an expired result. */
  async resultBody(team: string, taskId: string) {
    const task = this.tasks.get(taskId) ?? (await this.recall(taskId));
    if (!task || task.team !== team) throw notFound(`task ${taskId} does not exist`);
    if (task.resultExpiresAt !== undefined && task.resultExpiresAt <= this.clock.now()) {
      throw notFound(`the result of task ${taskId} expired at ${new Date(task.resultExpiresAt).toISOString()}`);
    }
    return { code: 0, message: 'success', data: this.data(task) };
  }

  submissionBody(task: Task) {
    return {
      code: 0,
      message: 'success',
      data: {
        status: task.status === 'pending' ? 'pending' : 'processing',
        task_id: task.id,
        model_id: task.slug,
        get_result: { method: 'GET', url: `${this.publicOrigin()}/api/v1/tasks/${task.id}` },
      },
    };
  }

  /** Waits until every task has ended (for tests and shutdown); timers must be able to fire. */
  async settle(): Promise<void> {
    while (this.settling.size > 0) await Promise.all([...this.settling]);
  }

  /**
   * Forgets recorded tasks whose results expired, and ones an earlier process left unfinished that
   * nobody asked for within a result's lifetime.
   */
  async prune(): Promise<void> {
    const now = this.clock.now();
    const lifetimeMs = this.options.resultTtlSeconds * 1000;
    for (const [id, record] of await this.records.readAll()) {
      const expiresAt = record.resultExpiresAt ?? record.submitTime + record.processingMs + lifetimeMs;
      if (expiresAt <= now) await this.records.remove(id);
    }
  }

  /** Stops every timer: nothing of this gateway happens after it, as after the end of its process. */
  close(): void {
    for (const task of this.tasks.values()) if (task.timer) this.clock.clearTimer(task.timer);
    for (const timer of this.expiryTimers) this.clock.clearTimer(timer);
  }

  /**
   * A task an earlier process recorded, taken over: one that had not ended goes on here (a running
   * one for the rest of its processing time), and its links point at this process's address.
   */
  private async recall(taskId: string): Promise<Task | undefined> {
    const record = await this.records.read(taskId);
    const behaviour = record ? MODEL_BEHAVIOURS[record.slug] : undefined;
    if (!record || !behaviour || this.tasks.has(taskId)) return this.tasks.get(taskId);
    const { origin, ...fields } = record;
    const task: Task = { ...fields, behaviour, chargedHere: false };
    if (task.output && origin !== this.publicOrigin()) task.output = movedTo(task.output, origin, this.publicOrigin());
    this.tasks.set(task.id, task);
    if (task.status === 'processing') this.start(task);
    else if (task.status === 'pending') this.enqueue(task);
    return task;
  }

  /**
   * The id drawn, or another when it is taken here or by an earlier process on the same folder
   * (which may have had the same seed). The first draw is made with the task's other draws, so a
   * seed gives the same ids as ever.
   */
  private async unused(drawn: string): Promise<string> {
    let id = drawn;
    while (this.tasks.has(id) || (await this.records.read(id)) !== undefined) id = `task_${this.random.hex(12)}`;
    return id;
  }

  private enqueue(task: Task): void {
    const queue = this.waiting.get(task.team) ?? [];
    queue.push(task);
    this.waiting.set(task.team, queue);
    this.startWaiting(task.team);
  }

  private save(task: Task): Promise<void> {
    const { behaviour: _behaviour, chargedHere: _chargedHere, timer: _timer, ...fields } = task;
    return this.records.write(task.id, { ...fields, origin: this.publicOrigin() });
  }

  private data(task: Task) {
    const base = { status: task.status, task_id: task.id, model_id: task.slug, created_at: task.submitTime };
    if (task.status === 'pending' || task.status === 'processing') return base;
    const timing = {
      duration: (task.endTime ?? 0) - (task.startTime ?? task.submitTime),
      result_expires_at: task.resultExpiresAt,
    };
    const extensions = { submit_time: task.submitTime, start_time: task.startTime, end_time: task.endTime };
    if (task.status === 'failed')
      return { ...base, ...timing, error: task.error, result: { resources: [], metadata: {}, extensions } };
    return {
      ...base,
      ...timing,
      result: { resources: task.output?.resources ?? [], metadata: task.output?.metadata ?? {}, extensions },
    };
  }

  /** Sets the task's outcome; the price units to refund (all of them on failure, the unused ones on success). */
  private outcome(task: Task, output: ProducedOutput | undefined, error: Task['error']): number {
    if (!output) {
      task.status = 'failed';
      task.error = error;
      return task.unitPriceUnits * task.chargedUnits;
    }
    const { blobs, ...answer } = output;
    task.status = 'success';
    task.output = { ...answer, resultTokens: blobs.map((blob) => blob.token) };
    const unused = output.unitsUsed === undefined ? 0 : Math.max(0, task.chargedUnits - output.unitsUsed);
    return task.unitPriceUnits * unused;
  }

  private startWaiting(team: string): void {
    const queue = this.waiting.get(team) ?? [];
    while (queue.length > 0 && (this.runningCount.get(team) ?? 0) < this.options.maxConcurrent) {
      const task = queue.shift()!;
      const expiresAfter = task.input.execution_expires_after;
      if (typeof expiresAfter === 'number' && this.clock.now() - task.submitTime > expiresAfter * 1000) {
        void this.end(
          task,
          undefined,
          { code: 408, message: `Task expired: it waited longer than execution_expires_after (${expiresAfter} s)` },
          false,
        );
        continue;
      }
      this.start(task);
    }
  }

  /** Runs a task for its processing time; a task taken over mid-way runs for what was left of it. */
  private start(task: Task): void {
    const resumed = task.status === 'processing' && task.startTime !== undefined;
    const remainingMs = resumed
      ? Math.max(0, task.startTime! + task.processingMs - this.clock.now())
      : task.processingMs;
    task.status = 'processing';
    if (!resumed) task.startTime = this.clock.now();
    else this.resumedTasks.add(task.id);
    this.runningCount.set(task.team, (this.runningCount.get(task.team) ?? 0) + 1);
    this.stats.taskStarted(task.team);
    const elapsed = new Promise<void>((resolve) => {
      task.timer = this.clock.setTimer(remainingMs, resolve);
    });
    const started = resumed ? Promise.resolve() : this.save(task);
    const work = Promise.all([started, this.produce(task)]).then(
      async ([, output]) => {
        await elapsed;
        if (task.injectFailure) {
          await Promise.all(output.blobs.map((blob) => this.blobs.remove(blob.token)));
          await this.end(
            task,
            undefined,
            { code: 500, message: 'Internal server error: the model could not generate an output for this input' },
            true,
          );
        } else await this.end(task, output, undefined, true);
      },
      async (error: unknown) => {
        await elapsed;
        const failure =
          error instanceof TaskInputError
            ? { code: 400, message: `Invalid parameters: ${error.message}` }
            : {
                code: 500,
                message: `Internal server error: ${error instanceof Error ? error.message : String(error)}`,
              };
        await this.end(task, undefined, failure, true);
      },
    );
    const tracked = work.finally(() => this.settling.delete(tracked));
    this.settling.add(tracked);
  }

  private async produce(task: Task): Promise<ProducedOutput> {
    const scratchDir = await mkdtemp(join(tmpdir(), 'gateway-task-'));
    const context: ProduceContext = {
      taskId: task.id,
      input: task.input,
      scratchDir,
      useFfmpeg: this.options.useFfmpeg,
      saveResult: async (name, bytes, contentType) => {
        // Result files live until the result expires; that moment is set when the task ends.
        const blob = await this.blobs.put('results', name, bytes, contentType, Number.POSITIVE_INFINITY);
        return { blob, url: `${this.publicOrigin()}${this.blobs.urlPath(blob)}` };
      },
      fetchInput: (fieldName, url, maxBytes) => this.inputs.fetch(fieldName, url, maxBytes),
    };
    try {
      return await task.behaviour.produce(context);
    } finally {
      await rm(scratchDir, { recursive: true, force: true });
    }
  }

  /** Ends a task: its answer is readable at once, and recorded before any webhook tells of it. */
  private async end(
    task: Task,
    output: ProducedOutput | undefined,
    error: Task['error'],
    wasRunning: boolean,
  ): Promise<void> {
    const now = this.clock.now();
    const expiresAt = now + this.options.resultTtlSeconds * 1000;
    // A task taken over from an earlier process ended, as a hosted gateway's would have, at its start
    // plus its processing time, not when this process came up: its duration is not the downtime.
    task.endTime = this.resumedTasks.delete(task.id) ? Math.min(now, task.startTime! + task.processingMs) : now;
    task.resultExpiresAt = expiresAt;
    task.timer = undefined;
    const refundUnits = this.outcome(task, output, error);
    if (refundUnits > 0 && task.chargedHere) this.accounts.refund(task.team, Math.round(refundUnits));
    this.stats.taskEnded(task.team, task.status === 'success' ? 'success' : 'failed', wasRunning);
    if (wasRunning) this.runningCount.set(task.team, (this.runningCount.get(task.team) ?? 1) - 1);
    this.startWaiting(task.team);
    // Expired results go with their files; the record stays so that a read answers 404, not a crash.
    const expiry = this.clock.setTimer(this.options.resultTtlSeconds * 1000, () => {
      this.expiryTimers.delete(expiry);
      for (const token of task.output?.resultTokens ?? []) void this.blobs.remove(token);
      delete task.output;
    });
    this.expiryTimers.add(expiry);
    await Promise.all((output?.blobs ?? []).map((blob) => this.blobs.expireAt(blob, expiresAt)));
    await this.save(task);
    if (task.webhookUrl)
      this.webhooks.send(task.webhookUrl, task.id, { code: 0, message: 'success', data: this.data(task) });
  }
}

/** A recorded answer with its links moved from the address it was written under to today's. */
function movedTo(output: TaskOutput, from: string, to: string): TaskOutput {
  const move = (url: string) => (url.startsWith(`${from}/`) ? `${to}${url.slice(from.length)}` : url);
  return { ...output, resources: output.resources.map((resource) => ({ ...resource, url: move(resource.url) })) };
}
