import { err, ok, type Result } from '../result.js';
import { foldJournal, foldJournalFile, type RunState, type UnreadableJournal } from './fold.js';
import type { JournalEvent, JournalRead } from './journal.js';

export { itemKey, stepKey } from './fold.js';

/**
 * What a journal says happened, as the state a resumed run starts from: the fold's maps as they
 * are (see `RunState` for each), and the run's start record in the names a resume uses.
 */
export type ReplayedState = Pick<
  RunState,
  | 'finishedSteps'
  | 'finishedItems'
  | 'completeRows'
  | 'submittedTasks'
  | 'unansweredSubmissions'
  | 'unknownSubmissions'
  | 'uploads'
  | 'downloads'
  | 'status'
  | 'owner'
  | 'damagedLines'
  | 'unacceptedDamage'
> & {
  runId: string;
  /** Each row's inputs; absent for a batch run, whose rows are its kept batch file's (`rowCount`, `rowsSha256`). */
  rows?: Array<Record<string, unknown>>;
  rowCount: number;
  rowsSha256?: string;
  /** Whether `--skip-invalid-rows` left rows out: reading the batch again leaves out the same. */
  skippedRows: boolean;
  sets: string[];
  batch: string | null;
  /** The original recipe's absolute path, and the folder the run was started from (absent in old journals). */
  recipePath: string;
  cwd?: string;
  /** The batch file as the user named it, absolute (absent in old journals or without --batch). */
  batchSource?: string | null;
  /** Local file → SHA-256 of its bytes when the run started. */
  localFiles: Record<string, string>;
  /** The gateway the run's tasks were submitted to (absent in old journals). */
  gateway?: string;
  /** What the run has committed so far, in USD: a resume's spending cap counts it. */
  committedUsd: number;
};

export function resumeStateOf(run: RunState): ReplayedState {
  const { start } = run;
  return {
    runId: start.run_id,
    ...(start.rows ? { rows: start.rows } : {}),
    rowCount: run.rowCount,
    skippedRows: (start.skipped_rows?.length ?? 0) > 0,
    ...(start.rows_sha256 !== undefined ? { rowsSha256: start.rows_sha256 } : {}),
    sets: start.sets,
    batch: start.batch,
    finishedSteps: run.finishedSteps,
    finishedItems: run.finishedItems,
    ...(run.completeRows ? { completeRows: run.completeRows } : {}),
    submittedTasks: run.submittedTasks,
    unansweredSubmissions: run.unansweredSubmissions,
    unknownSubmissions: run.unknownSubmissions,
    uploads: run.uploads,
    downloads: run.downloads,
    status: run.status,
    owner: run.owner,
    recipePath: start.recipe,
    committedUsd: run.spend.committedUnits / 10_000,
    ...(start.cwd !== undefined ? { cwd: start.cwd } : {}),
    ...(start.batch_source !== undefined ? { batchSource: start.batch_source } : {}),
    localFiles: start.local_files ?? {},
    ...(start.gateway !== undefined ? { gateway: start.gateway } : {}),
    damagedLines: run.damagedLines,
    unacceptedDamage: run.unacceptedDamage,
  };
}

/** The resume state of a journal as read from disk, or why it describes no run. */
export function replayJournal(read: JournalRead): Result<ReplayedState, UnreadableJournal> {
  const folded = foldJournal(read);
  return folded.ok ? ok(resumeStateOf(folded.value)) : err(folded.error);
}

/**
 * The resume state of the journal at `path`, folded as it is read and keeping only what a resume
 * reads: the journal of a 100,000-row batch had been read whole (its events held at once) and
 * folded with the report's item records, 270 MB of heap before the resume began.
 */
export function replayJournalFile(path: string): Result<ReplayedState, UnreadableJournal> {
  const { folded } = foldJournalFile(path, { forResume: true });
  return folded.ok ? ok(resumeStateOf(folded.value)) : err(folded.error);
}

/** The resume state of events known to describe a run. */
export function replay(events: JournalEvent[]): ReplayedState {
  const replayed = replayJournal({ events, damagedLines: [] });
  if (!replayed.ok) throw new Error(`Internal error: a journal without run-started (${replayed.error.message})`);
  return replayed.value;
}
