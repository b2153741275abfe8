/**
 * What travels between a coordinator (`pipeline run --workers`) and its workers (`pipeline
 * worker`) through Redis: the BullMQ jobs, their results, and the keys both read. Nothing here
 * holds a secret: each worker has its own API key, and the jobs name the gateway by its address.
 */
import type { Command } from '../engine/command.js';
import type { StepFailure } from '../engine/failure.js';
import type { ModelJob, ModelJobEnd, RemoteAction, RemoteItem } from '../engine/remote.js';
import type { Result } from '../result.js';

/** The queue when neither side names one (`--queue`, `PIPELINE_WORKERS_QUEUE`). */
export const DEFAULT_QUEUE = 'pipeline';

/** What every job carries: the run it belongs to and the gateway its worker must use. */
interface JobBase {
  run: string;
  /** The coordinator's gateway base URL: a worker on another gateway would not find the tasks. */
  gateway: string;
}

/** A file a `run:` item reads: the text its command names it by, and its bytes' SHA-256 (in the blob store). */
export interface JobFile {
  value: string;
  sha256: string;
  name: string;
}

export type JobData =
  | (JobBase & { kind: 'model'; job: ModelJob })
  | (JobBase & { kind: 'action'; item: RemoteItem; action: RemoteAction; input: Record<string, unknown> })
  | (JobBase & { kind: 'command'; item: RemoteItem; command: Command; files: JobFile[]; passEnv: string[] });

/** A `run:` item's answer: the command's outputs, and the files it wrote, by path under its folder. */
export interface CommandAnswer {
  outputs: unknown;
  files: Array<{ path: string; sha256: string }>;
}

/** What a job gives back, by its kind (a BullMQ return value: plain JSON). */
export type JobAnswer = ModelJobEnd | Result<unknown, StepFailure> | Result<CommandAnswer, StepFailure>;

/**
 * The record of a model job's submission, in Redis under `submissionKey`: written before the POST
 * (`submitting`) and with the task id before any poll (`submitted`). A worker that takes over a job
 * whose worker was lost reads it: a task id is polled, never submitted again; `submitting` without
 * an id is an outcome unknown.
 */
export type SubmissionRecord =
  | { state: 'submitting' }
  | { state: 'submitted'; task_id: string }
  | { state: 'refused'; reason: string; message: string }
  | { state: 'unknown'; message: string };

/** One key per submission the coordinator journaled (`request-sent`): its request id is unique. */
export const submissionKey = (queue: string, request: string) => `pipeline:workers:${queue}:submission:${request}`;

/** A file's bytes by their SHA-256, for `run:` items on workers. */
export const blobKey = (sha256: string) => `pipeline:workers:blob:${sha256}`;

/** Records and blobs outlive any run that may be resumed: a week. */
export const RECORD_TTL_S = 7 * 24 * 3600;
/** A file sent to a worker, or brought back, is needed for minutes: a day is plenty. */
export const BLOB_TTL_S = 24 * 3600;
/** The largest file a `run:` item on a worker may read or write: Redis holds it in memory. */
export const MAX_BLOB_BYTES = 64 * 1024 * 1024;

/**
 * How long a coordinator with items waiting sees no worker before it says so (within a minute, as
 * promised; `PIPELINE_WORKERS_SILENCE_MS` shortens it for tests).
 */
export const SILENCE_MS = 30_000;

/**
 * A worker counts as lost once it has shown no sign of life for its `pipeline worker
 * --takeover-after` (15 s unless told): its heartbeat lapses, and so does BullMQ's lock on each job
 * it holds. After the next stalled check of another worker, that worker takes the job over:
 * idempotently, through the submission record, so nothing paid is sent twice. Shorter takes over
 * sooner; a worker whose event loop stalls for longer (a machine swapping) loses its jobs to another,
 * which is safe but repeats their polls.
 */
export const DEFAULT_TAKEOVER_S = 15;
/** A worker beats, and looks for other workers' lapsed locks, a third as often as it stays alive: at least every 5 s. */
export const beatEveryMs = (takeoverMs: number) => Math.min(5_000, Math.max(500, Math.round(takeoverMs / 3)));
/** Take-overs are safe, so a job may be taken over several times (a worker lost after another). */
export const MAX_STALLED = 10;

/**
 * How long a job a worker cannot run (the run's gateway is not the worker's) waits before any
 * worker takes it again: long enough that a misconfigured worker does not spin on it, short enough
 * that a good worker that frees up soon after finds it.
 */
export const PASS_ON_MS = 2_000;

/** The progress a worker leaves on a job it passed on: why, for the run to say once. */
export interface PassedOn {
  passed_on: string;
}
