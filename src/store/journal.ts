import { closeSync, fdatasync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { plural } from '../format.js';

/** One state change of a run. Every event has its time and kind; the rest depends on the kind. */
export type JournalEvent =
  | RunStartedEvent
  /** `accepted_damage`: the unreadable lines a `resume --force` went on despite. */
  | { type: 'run-resumed'; t: number; accepted_damage?: number[]; owner?: RunOwner }
  /** `items_from`: the step whose items this one iterates, item i from its item i (item lineage). */
  | { type: 'step-started'; t: number; row: number; step: string; items_from?: string }
  | { type: 'step-skipped'; t: number; row: number; step: string; reason: string }
  /** A step that never ran (or was stopped mid-way) because the run was stopped or a step before it failed. */
  | { type: 'step-cancelled'; t: number; row: number; step: string; reason: string }
  /** `cost_usd`: what the submission costs when the gateway accepts it; absent when its price is unknown. */
  | {
      type: 'request-sent';
      t: number;
      row: number;
      step: string;
      index: number;
      slug: string;
      request: string;
      cost_usd?: number;
    }
  | {
      type: 'submission-refused';
      t: number;
      row: number;
      step: string;
      index: number;
      reason: string;
      input?: Record<string, unknown>;
    }
  /** A paid text call, fsynced before it leaves; `call-ended` says how it ended. */
  | {
      type: 'call-sent';
      t: number;
      row: number;
      step: string;
      index: number;
      model: string;
      request: string;
      /** What was asked (the prompt rendered, strings cut at 2,000 characters), as `task-submitted` keeps a model's input. */
      input?: Record<string, unknown>;
    }
  | {
      type: 'call-ended';
      t: number;
      row: number;
      step: string;
      index: number;
      request: string;
      outcome: 'answered' | 'failed' | 'unknown';
      message?: string;
    }
  | {
      type: 'submission-unknown';
      t: number;
      row: number;
      step: string;
      index: number;
      request: string;
      message: string;
      input?: Record<string, unknown>;
    }
  /** `input`: what the model was asked (long strings cut), for the report. */
  | {
      type: 'task-submitted';
      t: number;
      row: number;
      step: string;
      index: number;
      slug: string;
      request: string;
      task_id: string;
      input?: Record<string, unknown>;
    }
  /** `polls`: reads of the task; `error`: the gateway's message for a task that failed. */
  | {
      type: 'task-finished';
      t: number;
      row: number;
      step: string;
      index: number;
      task_id: string;
      status: string;
      duration_ms: number | null;
      result_expires_at: number | null;
      polls?: number;
      error?: string;
    }
  | {
      type: 'output-written';
      t: number;
      row: number;
      step: string;
      index: number;
      task_id: string;
      url: string;
      path: string;
      bytes: number;
    }
  | {
      type: 'upload-done';
      t: number;
      hash: string;
      path: string;
      file_id: string;
      url: string;
      expires_at: number | null;
    }
  | { type: 'item-finished'; t: number; row: number; step: string; index: number; outputs: unknown }
  /** `input`: what the item asked (long strings cut), so that the report shows what made a cached output. */
  | {
      type: 'item-cached';
      t: number;
      row: number;
      step: string;
      index: number;
      key: string;
      input?: Record<string, unknown>;
      /** When the entry was made (Unix ms), and by which run: absent where this run made it, or an older version did. */
      made_at?: number;
      made_by?: string;
    }
  | { type: 'step-cached'; t: number; row: number; step: string; keys: string[] }
  /** An item that did not run: `reason` names the item its trouble began with (`bg[1] failed`), or its condition. */
  | { type: 'item-skipped'; t: number; row: number; step: string; index: number; reason: string }
  /** An item that failed for good (after the step's retries), before its step's `step-failed`. */
  | { type: 'item-failed'; t: number; row: number; step: string; index: number; reason: string; message: string }
  /** `skipped_items`: items that did not run; the step is then not done for a resume, which tries them again. */
  | {
      type: 'step-finished';
      t: number;
      row: number;
      step: string;
      outputs: unknown;
      duration_ms: number;
      skipped_items?: number[];
    }
  | {
      type: 'step-failed';
      t: number;
      row: number;
      step: string;
      reason: string;
      message: string;
      outcome_unknown: boolean;
      task_id?: string;
      continued?: boolean;
    }
  /**
   * `stopped`: the spending cap or the gateway's 402 stopped items (exit 3). `outputs`: the recipe's
   * outputs, a list by row for a batch; absent for a recipe without `outputs:`, whose rows have
   * nothing to say (each is `{}`: `emptyOutputs` in fold.ts).
   */
  | { type: 'run-finished'; t: number; status: 'succeeded' | 'failed' | 'stopped'; outputs?: unknown }
  | { type: 'run-interrupted'; t: number }
  /** The requests sent in one second (`second`: its start, ms since the epoch) by kind, and the 429s among them. */
  | { type: 'requests'; t: number; second: number; counts: Partial<Record<TrafficKind, number>>; rate_limited: number };

/** Requests as the report and the live view count them. */
export type TrafficKind = 'submit' | 'poll' | 'upload' | 'tool' | 'text' | 'other';

/**
 * How a run began. `recipe` is the original recipe's absolute path and `cwd` the folder the run was
 * started from: a resume analyzes the kept copy of the recipe as if it stood there, so its relative
 * paths still point at the user's files. `local_files` maps each local file the run reads to the
 * SHA-256 of its bytes then, so that a resume notices a file that changed. Journals written before
 * these fields existed lack them.
 */
/** The process that writes a run's journal: a run it no longer writes, unfinished, was interrupted. */
export interface RunOwner {
  pid: number;
  host: string;
}

export interface RunStartedEvent {
  type: 'run-started';
  t: number;
  owner?: RunOwner;
  run_id: string;
  recipe: string;
  name: string;
  /**
   * Each row's inputs. Absent for a `--batch` run, whose rows are read again from the kept batch
   * file: a million rows would make this line the journal's biggest, read whole by every fold.
   */
  rows?: Array<Record<string, unknown>>;
  /** The number of rows, and (for a batch) the SHA-256 of their inputs, which a resume checks it reads again. */
  row_count?: number;
  rows_sha256?: string;
  sets: string[];
  batch: string | null;
  /** The gateway its tasks are submitted to: `local`, or the media API base (see Connection.gateway). Absent in old journals. */
  gateway?: string;
  cwd?: string;
  batch_source?: string | null;
  local_files?: Record<string, string>;
  /** The estimate the run started with: its known cost in USD, and whether that is a lower bound. */
  cost?: { estimated_usd: number; lower_bound: boolean };
  /** Batch rows `--skip-invalid-rows` left out: where each problem is and what it is. */
  skipped_rows?: Array<{ where: string; message: string }>;
  /** The recipe's steps and what each depends on: the report draws the DAG from it. */
  dag?: Array<{ id: string; action: string; depends_on: string[]; model?: string }>;
  /**
   * The names of the recipe's `outputs:`. With none, a resume does not keep the results of rows
   * whose every step finished (nothing reads them again); a journal without this keeps them all.
   */
  recipe_outputs?: string[];
}

/** The `task_id` of an `output-written` whose file came from the step cache, not from a task. */
export const CACHED_TASK_ID = 'cached';

type EventBody<E> = E extends unknown ? Omit<E, 't'> : never;
export type NewEvent = EventBody<JournalEvent>;

/** The record a run keeps of itself. */
export interface Journal {
  /** Records an event; it reaches the file, in order, within a moment. */
  append(event: NewEvent): void;
  /** Records an event and resolves once it, and everything before it, is on disk: before any paid request. */
  appendDurable(event: NewEvent): Promise<void>;
  /** Writes what is pending and syncs it; the journal can take no more. */
  close(): void;
  /**
   * Why the journal could take no more lines (a full disk, a failing one), once it could not: from
   * then on `append` records nothing and `appendDurable` rejects, so no paid request goes unrecorded.
   */
  readonly failure: JournalWriteError | undefined;
  /** Calls `listener` once, when the journal fails (at once if it has). */
  whenFailed(listener: (failure: JournalWriteError) => void): void;
}

/** The journal's file could not be written or synced: the run cannot go on without a record of it. */
export class JournalWriteError extends Error {
  constructor(
    readonly path: string,
    override readonly cause: NodeJS.ErrnoException,
  ) {
    super(`cannot write the run's journal ${path}: ${cause.code ? `${cause.code}, ` : ''}${describeIoError(cause)}`);
  }
}

/** `no space left on device`, from `ENOSPC: no space left on device, write`. */
function describeIoError(error: NodeJS.ErrnoException): string {
  const text = error.message.replace(/^E[A-Z]+: /, '');
  return text.replace(/, (write|fsync|fdatasync|open)( '.*')?$/, '');
}

/**
 * An append-only JSONL file with group commit. Events are kept in order in memory and written
 * together at the end of the current turn of the event loop. A durable event waits for the next
 * sync that starts after its line was written; one sync at a time runs off the event loop, and
 * every durable event written meanwhile shares the one after it. So a burst of 200 submissions
 * costs one sync, not 200, a steady stream of them costs a sync per disk flush rather than one per
 * turn, and still none of them is sent before its line is on disk. An event not yet written when
 * the process is killed is at most one turn old and never a `request-sent`: those are synced first.
 */
export class FileJournal implements Journal {
  private readonly fd: number;
  private pending: string[] = [];
  /** Durable events written, waiting for a sync that starts after them. */
  private waiters: Waiter[] = [];
  private scheduled = false;
  private syncing = false;
  private closed = false;
  /** The file's length after its last whole write: a write cut short is cut back to it. */
  private size: number;
  private failed: JournalWriteError | undefined;
  private failureListeners: Array<(failure: JournalWriteError) => void> = [];
  private readers: Array<(event: JournalEvent) => void> = [];

  constructor(
    readonly path: string,
    private readonly now: () => number,
    private readonly io: JournalIo = { writeSync, fdatasync },
  ) {
    this.fd = openSync(path, 'a+');
    this.size = fstatSync(this.fd).size;
    // A run killed mid-write, or a damaged file, may end without a newline: new records start on a
    // line of their own, so that the cut line stays one bad line and takes nothing with it.
    if (!endsWithNewline(this.fd)) this.size += writeSync(this.fd, '\n');
  }

  get failure(): JournalWriteError | undefined {
    return this.failed;
  }

  /**
   * Calls `reader` with each line as it reached the file, read back as a resume would read it (so
   * nothing the run does to its objects afterwards shows), in order; a line a failed write cut off
   * never reaches it. Lines written before the call are not given.
   */
  readWritten(reader: (event: JournalEvent) => void): void {
    this.readers.push(reader);
  }

  whenFailed(listener: (failure: JournalWriteError) => void): void {
    if (this.failed) listener(this.failed);
    else this.failureListeners.push(listener);
  }

  append(event: NewEvent): void {
    if (this.closed) throw new Error(`Internal error: journal ${this.path} appended after close`);
    // The run is being stopped (see `failure`): what it records on the way has nowhere to go.
    if (this.failed) return;
    this.pending.push(`${JSON.stringify({ t: this.now(), ...event })}\n`);
    this.schedule();
  }

  appendDurable(event: NewEvent): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    this.append(event);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  close(): void {
    if (this.closed) return;
    this.write();
    if (!this.failed) {
      try {
        fsyncSync(this.fd);
      } catch (error) {
        this.fail(error as NodeJS.ErrnoException);
      }
    }
    this.closed = true;
    closeSync(this.fd);
    // The sync just made covers every line: nobody waits for one still under way.
    this.release();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.closed) return;
      this.write();
      this.sync();
    });
  }

  private write(): void {
    if (this.pending.length === 0 || this.failed) return;
    const lines = this.pending;
    const bytes = Buffer.from(lines.join(''));
    this.pending = [];
    try {
      // A write may take part of the bytes (a disk filling up): the rest is written after it.
      for (let done = 0; done < bytes.length; ) done += this.io.writeSync(this.fd, bytes, done);
      this.size += bytes.length;
    } catch (error) {
      this.fail(error as NodeJS.ErrnoException);
      return;
    }
    if (this.readers.length === 0) return;
    for (const line of lines) {
      const event = JSON.parse(line) as JournalEvent;
      for (const reader of this.readers) reader(event);
    }
  }

  /**
   * The file cannot be written or synced: the lines of the failed write are cut off, so that the
   * journal ends on its last whole line (a resume then reads no damaged line), every durable event
   * not yet synced is refused, and the listeners (the run, which stops) are told.
   */
  private fail(cause: NodeJS.ErrnoException): void {
    if (this.failed) return;
    this.failed = new JournalWriteError(this.path, cause);
    try {
      ftruncateSync(this.fd, this.size);
    } catch {
      // The file keeps a cut line: a resume reports it as damaged, as after a crash.
    }
    this.pending = [];
    this.release();
    const listeners = this.failureListeners;
    this.failureListeners = [];
    for (const listener of listeners) listener(this.failed);
  }

  /** Starts a sync for the durable events written so far, unless one is under way: its end starts the next. */
  private sync(): void {
    if (this.syncing || this.waiters.length === 0) return;
    this.syncing = true;
    const covered = this.waiters;
    this.waiters = [];
    this.io.fdatasync(this.fd, (error) => {
      this.syncing = false;
      // After close, its own sync covered these lines (and the descriptor may be another file's by now).
      if (error && !this.closed) {
        this.waiters = [...covered, ...this.waiters];
        this.fail(error);
        return;
      }
      for (const waiter of covered) waiter.resolve();
      if (!this.closed) this.sync();
    });
  }

  /** Answers every durable event waiting: on disk, unless the journal failed. */
  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      if (this.failed) waiter.reject(this.failed);
      else waiter.resolve();
    }
  }
}

/** The file system calls a journal makes as a run goes: a test can make them fail as a full disk does. */
export interface JournalIo {
  writeSync(fd: number, bytes: Buffer, offset: number): number;
  fdatasync(fd: number, done: (error: NodeJS.ErrnoException | null) => void): void;
}

interface Waiter {
  resolve(): void;
  reject(failure: JournalWriteError): void;
}

function endsWithNewline(fd: number): boolean {
  const { size } = fstatSync(fd);
  if (size === 0) return true;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] === 0x0a;
}

/** A journal as read from disk: the events that could be read, and the lines (1-based) that could not. */
export interface JournalRead {
  events: JournalEvent[];
  damagedLines: number[];
}

const isEvent = (value: unknown): value is JournalEvent =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { type?: unknown }).type === 'string' &&
  typeof (value as { t?: unknown }).t === 'number';

/**
 * Every readable event of a journal. A line that is not a whole event (cut short by a crash, or
 * damaged) is skipped and its number kept: the lines after it still count, and the reader decides
 * what the gap means.
 */
export function readJournalFile(path: string): JournalRead {
  const read: JournalRead = { events: [], damagedLines: [] };
  forEachJournalLine(
    path,
    (event) => read.events.push(event),
    (line) => read.damagedLines.push(line),
  );
  return read;
}

/**
 * Each line of the journal at `path` in order, read a block at a time (a batch's journal can be
 * gigabytes): `event` with each readable event, `damaged` with the number of each line that is not.
 */
export function forEachJournalLine(
  path: string,
  event: (event: JournalEvent) => void,
  damaged: (line: number) => void,
): void {
  const fd = openSync(path, 'r');
  try {
    const block = Buffer.alloc(1 << 20);
    let carried: Buffer = Buffer.alloc(0);
    let number = 0;
    const line = (bytes: Buffer) => {
      number++;
      const text = bytes.toString('utf8');
      if (!text.trim()) return;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        value = undefined;
      }
      if (isEvent(value)) event(value);
      else damaged(number);
    };
    for (
      let read = readSync(fd, block, 0, block.length, null);
      read > 0;
      read = readSync(fd, block, 0, block.length, null)
    ) {
      let chunk = block.subarray(0, read);
      if (carried.length > 0) chunk = Buffer.concat([carried, chunk]);
      let start = 0;
      for (let end = chunk.indexOf(0x0a, start); end !== -1; end = chunk.indexOf(0x0a, start)) {
        line(chunk.subarray(start, end));
        start = end + 1;
      }
      // The rest of the block is the start of a line the next block ends: copied, as the block is reused.
      carried = Buffer.from(chunk.subarray(start));
    }
    if (carried.length > 0) line(carried);
  } finally {
    closeSync(fd);
  }
}

/** The readable events of a journal; damaged lines are skipped (see readJournalFile). */
export function readJournal(path: string): JournalEvent[] {
  return readJournalFile(path).events;
}

/** `3 lines (4, 9, 12)`: for messages about damaged lines. */
export function describeLines(lines: number[]): string {
  const shown = lines.length > 10 ? `${lines.slice(0, 10).join(', ')}, …` : lines.join(', ');
  return `${plural(lines.length, 'line')} (${shown})`;
}
