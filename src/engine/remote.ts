/**
 * Items run by other processes (`pipeline run --workers`): the engine hands an item to `RemoteItems`
 * where it would run it itself, and keeps everything else (the plan, the journal, the cache, the
 * report). The command line gives the implementation (src/workers/coordinator.ts); the engine only
 * knows this interface.
 */
import type { TaskResult } from '../gateway/types.js';
import type { PlannedStep } from '../plan.js';
import type { Result } from '../result.js';
import type { Command } from './command.js';
import type { StepFailure } from './failure.js';

/** One item, as the workers and their records name it. */
export interface RemoteItem {
  row: number;
  step: string;
  index: number;
  /** `image` or `image[3]`, for messages. */
  label: string;
}

/** A model item's paid submission and its polling, done by a worker. */
export interface ModelJob extends RemoteItem {
  slug: string;
  /** The model's type (text-to-image, …): how its time grows with the input, for the worker's polls. */
  type: string;
  /** The input, with local files already uploaded by the coordinator: never a secret. */
  input: Record<string, unknown>;
  /** The coordinator's request id, journaled (`request-sent`) before the job is queued: the job's id. */
  request: string;
  /** A task submitted before a resume: the worker polls it and submits nothing. */
  taskId?: string;
  /** When the task was submitted (coordinator clock), 0 for a resumed task: the poll schedule's start. */
  expectedMs: number;
  firstPollMs?: number;
  maxPollIntervalMs: number;
}

/** How a model job ended, as the coordinator journals it. */
export type ModelJobEnd =
  /** The gateway certainly refused the submission: nothing was created. */
  | { kind: 'refused'; failure: StepFailure }
  /** The submission may have created a task (its answer was lost, or its worker was lost while sending). */
  | { kind: 'unknown'; message: string; failure: StepFailure }
  /** The task ended (succeeded or failed): its result. */
  | { kind: 'ended'; taskId: string; result: TaskResult; polls: number }
  /** The task exists, but reading it failed. */
  | { kind: 'unread'; taskId: string; failure: StepFailure }
  /**
   * The task exists, and its job was lost before it ended (Redis restarted without its data, a
   * worker's job failed after the task was created): no worker reads it, so this process does.
   */
  | { kind: 'orphaned'; taskId: string }
  /** The run was stopped before the job ended; `taskId` when a task was created. */
  | { kind: 'interrupted'; taskId?: string }
  /** The job was taken off the queue before any worker took it: nothing was sent. */
  | { kind: 'withdrawn' };

/** A `run:` item with `runs_on: worker`: its command and the files it reads, by path. */
export interface CommandJob extends RemoteItem {
  command: Command;
  /** Local files named by the command's values (`value`, as written, at `path` here): they travel by content hash. */
  files: Array<{ value: string; path: string }>;
}

/** The actions besides `model` and `run` that a worker runs: calls with an answer, no task. */
export type RemoteAction = 'llm' | 'web-search' | 'web-fetch';

type Outcome = Result<unknown, StepFailure>;

export interface RemoteItems {
  /** Whether the items of this step go to the workers. */
  takes(step: PlannedStep): boolean;
  /**
   * Queues the model job and waits for its end. `onSubmitted` is told the task id as soon as the
   * worker recorded it in Redis (before it polls), so that the journal has it even if the worker
   * is lost afterwards.
   */
  model(job: ModelJob, onSubmitted: (taskId: string) => void, signal: AbortSignal): Promise<ModelJobEnd>;
  /**
   * What became of a submission an earlier coordinator journaled (`request-sent`) and never heard
   * the answer of (it was killed): the task a worker recorded for it; `unsent` once its job is
   * certainly off the queue with nothing sent; `unknown` when a worker may have sent it.
   */
  recall(request: string): Promise<{ kind: 'submitted'; taskId: string } | { kind: 'unsent' } | { kind: 'unknown' }>;
  /** Runs an LLM or web item on a worker: its outputs, as the local runner would give them. */
  action(item: RemoteItem, action: RemoteAction, input: Record<string, unknown>, signal: AbortSignal): Promise<Outcome>;
  /** Runs a command on a worker; the files it wrote in its folder come back into `runDir`. */
  command(job: CommandJob, runDir: string, signal: AbortSignal): Promise<Outcome>;
}
