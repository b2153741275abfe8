/**
 * `pipeline worker`: takes the items of any run that queues them on BullMQ, and runs them with this
 * process's own key and client, under the budget it shares through Redis with every process on
 * the key. A model job is submitted at most once whatever happens to its worker: the submission is
 * recorded in Redis before the POST and its task id before any poll, and a job taken over from a
 * lost worker (BullMQ's stalled job) reads that record and polls the task instead of sending again.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { DelayedError, type Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Clock } from '../clock.js';
import { DurationModel } from '../engine/durations.js';
import { fromGateway, stepFailure } from '../engine/failure.js';
import type { StepFailureReason } from '../engine/step-retry.js';
import type { ModelJob, ModelJobEnd } from '../engine/remote.js';
import { gatewayCalls } from '../actions/gateway-calls.js';
import type { GatewayClient } from '../gateway/client.js';
import { err } from '../result.js';
import { waitForTask } from '../scheduler/poller.js';
import { isPending } from '../gateway/types.js';
import { RedisBlobs } from './blobs.js';
import { beat, leave } from './heartbeats.js';
import { reachable } from './coordinator.js';
import { runCommandJob } from './command-job.js';
import {
  beatEveryMs,
  type JobAnswer,
  type JobData,
  MAX_STALLED,
  PASS_ON_MS,
  type PassedOn,
  submissionKey,
} from './jobs.js';
import { claim, markSending, type RecordState, recordAnswer } from './submission-record.js';

/** This attempt at a job is no longer its owner's: nothing may be sent. */
class NotOwner extends Error {}

export interface WorkerOptions {
  redisUrl: string;
  /** The URL as it may be printed (no password). */
  shownUrl: string;
  queue: string;
  /** Jobs at once. */
  concurrency: number;
  /** How long this worker stays alive without a beat, and its jobs held, before another worker takes them over. */
  takeoverMs: number;
  client: GatewayClient;
  clock: Clock;
  /** This worker's gateway base URL: jobs of a run on another gateway are refused. */
  gateway: string;
  /** The environment a `run:` item's command starts from (credentials are never passed). */
  env: Record<string, string | undefined>;
  /** Lines for the person running the worker. */
  say: (line: string) => void;
}

export interface RunningWorker {
  /** Stops taking jobs, waits for those in hand, lets go of Redis. */
  close(): Promise<void>;
  /** Resolves when the worker has closed. */
  closed: Promise<void>;
  /** Jobs this worker ran to their end. */
  readonly done: number;
}

/** BullMQ wants its connections to wait for Redis rather than fail its blocking commands. */
const connection = (url: string) => {
  const redis = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: (times) => Math.min(200 * times, 2000) });
  redis.on('error', () => {});
  return redis;
};

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const { queue, say } = options;
  const id = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const records = connection(options.redisUrl);
  await reachable(records);
  // BullMQ leaves a connection it is given open when it closes: closed below with `records`.
  const jobs = connection(options.redisUrl);
  const blobs = new RedisBlobs(records);
  let closing = false;
  let done = 0;
  const worker = new Worker<JobData, JobAnswer>(
    queue,
    async (job, token, signal) => {
      if (job.data.gateway !== options.gateway) return passOn(job, token);
      const answer = await handle(job, signal ?? new AbortController().signal);
      done++;
      return answer;
    },
    {
      connection: jobs,
      concurrency: options.concurrency,
      lockDuration: options.takeoverMs,
      stalledInterval: beatEveryMs(options.takeoverMs),
      maxStalledCount: MAX_STALLED,
      autorun: false,
    },
  );
  worker.on('error', () => {});

  /** The runs whose jobs this worker passed on, said once each. */
  const passedOnRuns = new Set<string>();

  /**
   * A job of a run on another gateway: this worker must not run it (its key and budget are for its
   * own gateway), but a worker started with the run's address may. Nothing was claimed or sent: the
   * job goes back, delayed, for any worker; this one says why once per run, and leaves the reason
   * on the job, which the run says once too. A run whose every worker is on another gateway waits,
   * as it does with no worker at all.
   */
  async function passOn(job: Job<JobData, JobAnswer>, token: string | undefined): Promise<never> {
    const message = `worker ${id} uses the gateway at ${options.gateway}, the run at ${job.data.gateway}: start workers with the run's PIPELINE_BASE_URL`;
    if (!passedOnRuns.has(job.data.run)) {
      passedOnRuns.add(job.data.run);
      say(`passing on the jobs of run ${job.data.run}: ${message}`);
    }
    const progress = typeof job.progress === 'object' && job.progress !== null ? job.progress : {};
    const passedOn: PassedOn = { passed_on: message };
    await job.updateProgress({ ...progress, ...passedOn }).catch(() => {});
    await job.moveToDelayed(Date.now() + PASS_ON_MS, token);
    throw new DelayedError();
  }

  async function handle(job: Job<JobData, JobAnswer>, signal: AbortSignal): Promise<JobAnswer> {
    const data = job.data;
    switch (data.kind) {
      case 'model':
        return runModelJob(job, data.job, signal);
      case 'action': {
        const gatewayCall = gatewayCalls[data.action];
        if (!gatewayCall.idempotent) {
          // A worker taking over from a lost one cannot know whether the call was answered (and paid).
          const key = submissionKey(queue, String(job.id));
          const owner = `${id}/${String(job.id)}/${randomBytes(4).toString('hex')}`;
          const found = await claim(records, key, owner);
          if (found.state !== 'mine' || !(await markSending(records, key, owner)))
            return err({
              ...stepFailure(
                'outcome-unknown',
                `the worker running ${data.item.label} was lost during its call; it may have been answered (and paid). Run it again if it was not`,
              ),
              outcomeUnknown: true,
            });
        }
        return gatewayCall.call(options, data.input, signal);
      }
      case 'command':
        return runCommandJob(data, { blobs, env: options.env, signal });
    }
  }

  async function runModelJob(job: Job<JobData, JobAnswer>, data: ModelJob, signal: AbortSignal): Promise<ModelJobEnd> {
    if (data.taskId) return poll(data, data.taskId, 0, signal);
    const key = submissionKey(queue, data.request);
    // One owner per attempt at the job: a worker that takes it over becomes the owner, and this one can no longer send.
    const owner = `${id}/${String(job.id)}/${randomBytes(4).toString('hex')}`;
    const found = await claim(records, key, owner);
    if (found.state !== 'mine') return fromRecord(job, data, found, signal);
    let submitted: Awaited<ReturnType<GatewayClient['submit']>>;
    try {
      submitted = await options.client.submit(data.slug, data.input, {
        beforeSend: async () => {
          if (!(await markSending(records, key, owner))) throw new NotOwner();
        },
      });
    } catch (error) {
      if (!(error instanceof NotOwner)) throw error;
      // Nothing was sent: the job was withdrawn, or another worker took it over (and this attempt is void).
      if ((await records.hget(key, 'state')) === 'withdrawn') return { kind: 'withdrawn' };
      throw new Error(`${data.label} was taken over by another worker before it was sent`);
    }
    if (!submitted.ok) {
      const failure = fromGateway(submitted.error, `submission of ${data.label} to ${data.slug}`);
      if (submitted.error.outcomeUnknown) {
        const message =
          submitted.error.reason === 'outcome-unknown' ? submitted.error.cause.message : submitted.error.message;
        await recordAnswer(records, key, { state: 'unknown', message }).catch(() => {});
        return { kind: 'unknown', message, failure };
      }
      await recordAnswer(records, key, { state: 'refused', reason: failure.reason, message: failure.message }).catch(
        () => {},
      );
      return { kind: 'refused', failure };
    }
    const taskId = submitted.value.taskId;
    await recordTask(key, taskId);
    await job.updateProgress({ task_id: taskId }).catch(() => {});
    return poll(data, taskId, options.clock.now(), signal, isPending(submitted.value.status));
  }

  /** The task id, recorded before any poll: retried while Redis answers slowly, then the task is polled anyway. */
  async function recordTask(key: string, taskId: string): Promise<void> {
    // A worker taking over meanwhile finds `submitting` and calls the outcome unknown, which never pays twice;
    // the coordinator hears of the task with the job's end.
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await recordAnswer(records, key, { state: 'submitted', task_id: taskId });
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 500 * (attempt + 1)));
      }
    }
  }

  /** A job whose submission a worker (since lost) had begun: its task polled, never submitted again. */
  async function fromRecord(
    job: Job<JobData, JobAnswer>,
    data: ModelJob,
    found: Exclude<RecordState, { state: 'mine' }>,
    signal: AbortSignal,
  ): Promise<ModelJobEnd> {
    switch (found.state) {
      case 'submitted':
        say(
          `taking over ${data.label} (row ${data.row + 1} of run ${job.data.run}) of a lost worker: polling its task ${found.taskId}, not submitting again`,
        );
        await job.updateProgress({ task_id: found.taskId }).catch(() => {});
        return poll(data, found.taskId, 0, signal);
      case 'withdrawn':
        return { kind: 'withdrawn' };
      case 'refused':
        return { kind: 'refused', failure: stepFailure(found.reason as StepFailureReason, found.message) };
      case 'submitting':
      case 'unknown': {
        const message =
          found.state === 'unknown' ? found.message : 'the worker sending it was lost before the gateway answered';
        const failure = {
          ...stepFailure(
            'outcome-unknown',
            `submission of ${data.label} to ${data.slug}: ${message}; it may have created a task`,
          ),
          outcomeUnknown: true,
        };
        return { kind: 'unknown', message, failure };
      }
    }
  }

  // What this worker learns of each model's time, from the tasks it polled: a job queued before the
  // coordinator had learned anything carries its first guess, and would poll a known model blindly.
  const durations = new DurationModel();

  async function poll(
    data: ModelJob,
    taskId: string,
    submittedAt: number,
    signal: AbortSignal,
    queued = false,
  ): Promise<ModelJobEnd> {
    // The coordinator's figures serve until this worker has learned the model itself.
    const { schedule, done } = durations.pollSchedule(data.slug, data.type, data.input, {
      now: options.clock.now(),
      submittedAt,
      maxIntervalMs: data.maxPollIntervalMs,
      webhook: false,
      queued,
      guess: {
        expectedMs: data.expectedMs,
        ...(data.firstPollMs === undefined ? {} : { firstPollMs: data.firstPollMs }),
      },
    });
    try {
      const waited = await waitForTask(options.client, options.clock, taskId, { ...schedule, signal });
      if (!waited.ok) {
        if (signal.aborted) return { kind: 'interrupted', taskId };
        return { kind: 'unread', taskId, failure: fromGateway(waited.error, `reading task ${taskId}`) };
      }
      const { result } = waited.value;
      // From the gateway's own times only, as ever: no `elapsedMs` from this worker's clock.
      durations.observeEnded(data.slug, data.type, data.input, result, { queued });
      return { kind: 'ended', taskId, result, polls: waited.value.polls };
    } finally {
      done();
    }
  }

  // Alive while this runs: a coordinator whose workers all stopped beating says so.
  const alive = () => beat(records, queue, id, options.takeoverMs).catch(() => {});
  await alive();
  const heartbeat = setInterval(alive, beatEveryMs(options.takeoverMs));

  // Redis lost: no job can be taken, and the jobs in hand go on to their end (a take-over would poll
  // their tasks, never submit them again). Said once per outage, and again when it is back.
  let lost = false;
  records.on('close', () => {
    if (lost || closing) return;
    lost = true;
    say(`lost Redis at ${options.shownUrl}: taking no jobs until it is back (jobs in hand go on)`);
    void worker.pause(true).catch(() => {});
  });
  records.on('ready', () => {
    if (!lost) return;
    lost = false;
    say(`Redis is back at ${options.shownUrl}: taking jobs again`);
    worker.resume();
    void alive();
  });

  const closed = worker.run().then(() => undefined);
  say(`worker ${id} takes jobs of queue '${queue}' at ${options.shownUrl}, ${options.concurrency} at once`);
  return {
    closed,
    get done() {
      return done;
    },
    async close() {
      closing = true;
      clearInterval(heartbeat);
      await worker.close();
      await leave(records, queue, id).catch(() => {});
      records.disconnect();
      jobs.disconnect();
      await closed.catch(() => {});
    },
  };
}

export const workerDefaults = { concurrency: 4 };
