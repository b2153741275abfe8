import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Accounts } from './accounts.js';
import type { BlobStore, Blob } from './blob-store.js';
import type { GatewayClock, GatewayTimer } from './clock.js';
import { notFound } from './errors.js';
import { TaskInputError, type ModelBehaviour, type ProduceContext, type ProducedOutput } from './models/behaviour.js';
import type { ResolvedGatewayOptions } from './options.js';
import type { GatewayRandom } from './random.js';
import type { GatewayStats } from './stats.js';
import type { ServedModel } from './model-catalog.js';
import { unitsOf } from '../model-schemas/prices.js';
import type { WebhookSender } from './webhooks.js';

type TaskStatus = 'pending' | 'processing' | 'success' | 'failed';

interface Task {
  id: string;
  team: string;
  slug: string;
  input: Record<string, unknown>;
  behaviour: ModelBehaviour;
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
  output?: ProducedOutput;
  error?: { code: number; message: string };
  resultExpiresAt?: number;
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

  constructor(
    private readonly options: ResolvedGatewayOptions,
    private readonly clock: GatewayClock,
    private readonly random: GatewayRandom,
    private readonly accounts: Accounts,
    private readonly blobs: BlobStore,
    private readonly stats: GatewayStats,
    private readonly webhooks: WebhookSender,
    private readonly publicOrigin: () => string,
  ) {}

  /** Charges the team and queues the task; throws 402 before anything is queued when the balance is short. */
  submit(request: SubmitRequest): Task {
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
      ...(request.webhookUrl ? { webhookUrl: request.webhookUrl } : {}),
    };
    this.tasks.set(task.id, task);
    this.stats.taskSubmitted(request.slug);
    const queue = this.waiting.get(task.team) ?? [];
    queue.push(task);
    this.waiting.set(task.team, queue);
    this.startWaiting(task.team);
    return task;
  }

  /** The task result body, or 404 for an unknown id, another team's task or an expired result. */
  resultBody(team: string, taskId: string) {
    const task = this.tasks.get(taskId);
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

  close(): void {
    for (const task of this.tasks.values()) if (task.timer) this.clock.clearTimer(task.timer);
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

  private startWaiting(team: string): void {
    const queue = this.waiting.get(team) ?? [];
    while (queue.length > 0 && (this.runningCount.get(team) ?? 0) < this.options.maxConcurrent) {
      const task = queue.shift()!;
      const expiresAfter = task.input.execution_expires_after;
      if (typeof expiresAfter === 'number' && this.clock.now() - task.submitTime > expiresAfter * 1000) {
        this.end(
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

  private start(task: Task): void {
    task.status = 'processing';
    task.startTime = this.clock.now();
    this.runningCount.set(task.team, (this.runningCount.get(task.team) ?? 0) + 1);
    this.stats.taskStarted(task.team);
    const elapsed = new Promise<void>((resolve) => {
      task.timer = this.clock.setTimer(task.processingMs, resolve);
    });
    const work = this.produce(task).then(
      async (output) => {
        await elapsed;
        if (task.injectFailure) {
          await Promise.all(output.blobs.map((blob) => this.blobs.remove(blob.token)));
          this.end(
            task,
            undefined,
            { code: 500, message: 'Internal server error: the model could not generate an output for this input' },
            true,
          );
        } else this.end(task, output, undefined, true);
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
        this.end(task, undefined, failure, true);
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
      fetchInput: (fieldName, url, maxBytes) => this.fetchInput(fieldName, url, maxBytes),
    };
    try {
      return await task.behaviour.produce(context);
    } finally {
      await rm(scratchDir, { recursive: true, force: true });
    }
  }

  private end(task: Task, output: ProducedOutput | undefined, error: Task['error'], wasRunning: boolean): void {
    const now = this.clock.now();
    task.endTime = now;
    task.resultExpiresAt = now + this.options.resultTtlSeconds * 1000;
    task.timer = undefined;
    if (output) {
      task.status = 'success';
      task.output = output;
      for (const blob of output.blobs) blob.expiresAt = task.resultExpiresAt;
      if (output.unitsUsed !== undefined && output.unitsUsed < task.chargedUnits) {
        this.accounts.refund(task.team, Math.round(task.unitPriceUnits * (task.chargedUnits - output.unitsUsed)));
      }
    } else {
      task.status = 'failed';
      task.error = error;
      this.accounts.refund(task.team, Math.round(task.unitPriceUnits * task.chargedUnits));
    }
    this.stats.taskEnded(task.team, task.status === 'success' ? 'success' : 'failed', wasRunning);
    if (wasRunning) this.runningCount.set(task.team, (this.runningCount.get(task.team) ?? 1) - 1);
    // Expired results go with their files; the record stays so that a read answers 404, not a crash.
    this.clock.setTimer(this.options.resultTtlSeconds * 1000, () => {
      for (const blob of task.output?.blobs ?? []) void this.blobs.remove(blob.token);
      delete task.output;
    });
    if (task.webhookUrl)
      this.webhooks.send(task.webhookUrl, task.id, { code: 0, message: 'success', data: this.data(task) });
    this.startWaiting(task.team);
  }

  private async fetchInput(fieldName: string, url: string, maxBytes: number): Promise<Buffer> {
    if (url.startsWith('data:')) {
      const match = /^data:[\w.+/-]*(;[\w=-]+)*;base64,([A-Za-z0-9+/=\s]*)$/.exec(url);
      if (!match) throw new TaskInputError(`${fieldName} is a data: URL without Base64 content`);
      const bytes = Buffer.from(match[2]!, 'base64');
      if (bytes.length > maxBytes) throw new TaskInputError(`${fieldName} is larger than ${maxBytes} bytes`);
      return bytes;
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new TaskInputError(`${fieldName} is not a URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new TaskInputError(`${fieldName} must be an http or https URL`);
    const own = /^\/(files|results)\/([0-9a-f]+)\/([^/]+)$/.exec(parsed.pathname);
    if (parsed.origin === this.publicOrigin() && own) {
      const blob: Blob | undefined = this.blobs.lookup(own[1] as Blob['area'], own[2]!, decodeURIComponent(own[3]!));
      if (!blob)
        throw new TaskInputError(`${fieldName} could not be downloaded: 404 (the link expired or never existed)`);
      if (blob.size > maxBytes) throw new TaskInputError(`${fieldName} is larger than ${maxBytes} bytes`);
      return readFile(blob.path);
    }
    return downloadCapped(fieldName, parsed, maxBytes);
  }
}

async function downloadCapped(fieldName: string, url: URL, maxBytes: number): Promise<Buffer> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(30_000), redirect: 'follow' });
  } catch (error) {
    throw new TaskInputError(
      `${fieldName} could not be downloaded: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new TaskInputError(`${fieldName} could not be downloaded: HTTP ${response.status}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.length;
    if (size > maxBytes) throw new TaskInputError(`${fieldName} is larger than ${maxBytes} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}
