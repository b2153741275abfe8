import { formatUsd } from '../model-schemas/prices.js';
import { err, ok, type Result } from '../result.js';
import {
  foldJournal,
  type FoldPurpose,
  foldJournalFile,
  JournalFold,
  type RunState,
  type StepRecord,
  type UnlistedCounts,
  type UnreadableJournal,
} from './fold.js';
import type { JournalEvent, JournalRead } from './journal.js';
import { spendUsd } from './spend-fold.js';

export type StepSummary = StepRecord;

export interface RunSummary {
  run_id: string;
  name: string;
  recipe: string;
  status: 'running' | 'succeeded' | 'failed' | 'stopped' | 'interrupted';
  started_at: number;
  finished_at: number | null;
  duration_ms: number | null;
  rows: number;
  steps: StepSummary[];
  outputs: unknown;
  files: Array<{ step: string; row: number; path: string; bytes: number }>;
  /** Journal lines that could not be read; empty for a sound journal. */
  damaged_lines: number[];
  cost: RunCost;
  /** Batch rows `--skip-invalid-rows` left out, one entry per problem; empty when none were. */
  skipped_rows: Array<{ where: string; message: string }>;
  /**
   * A batch of more than LISTED_ROWS rows: the steps of later rows that succeeded, and the files
   * of later rows, counted rather than listed in `steps` and `files` (absent when none were).
   */
  not_listed?: UnlistedCounts;
}

/**
 * Rows whose steps and files a summary lists whatever happened to them; of later rows it lists
 * only the steps that did not succeed, and counts the rest, so that the summary of a batch of a
 * million rows is read in bounded memory. As the report shows its first 1,000 images.
 */
export const LISTED_ROWS = 1_000;

/**
 * The money side of a run, in USD: the estimate it started with (`null` in journals older than
 * prices), what it has committed (paid submissions sent and not refused), and that per step.
 */
export interface RunCost {
  estimated_usd: number | null;
  estimate_lower_bound: boolean;
  committed_usd: number;
  /** Of `committed_usd`, what went to tasks that ended failed: refunded where the gateway refunds them. */
  failed_usd: number;
  /** Of `committed_usd`, what went to submissions whose outcome is unknown: charged only if the gateway took them. */
  unknown_usd: number;
  /** Submissions to models whose price was unknown: not in `committed_usd`. */
  unpriced_submissions: number;
  by_step: Record<string, number>;
}

function costOf(run: RunState): RunCost {
  const { spend, start } = run;
  return {
    estimated_usd: start.cost?.estimated_usd ?? null,
    estimate_lower_bound: start.cost?.lower_bound ?? false,
    committed_usd: spendUsd(spend.committedUnits),
    failed_usd: spendUsd(spend.failedUnits),
    unknown_usd: spendUsd(spend.unknownUnits),
    unpriced_submissions: spend.unpriced,
    by_step: Object.fromEntries([...spend.byStepUnits].map(([step, units]) => [step, spendUsd(units)])),
  };
}

/** What `runs show` prints and run.json holds, read off the folded journal: it works for a killed run too. */
export function summaryOf(run: RunState, unlisted?: UnlistedCounts): RunSummary {
  const { start } = run;
  // Tasks end in any order; the listing follows the names, which follow the recipe.
  const files = [...run.files].sort((a, b) => a.row - b.row || a.path.localeCompare(b.path, 'en', { numeric: true }));
  return {
    run_id: start.run_id,
    name: start.name,
    recipe: start.recipe,
    status: run.status,
    started_at: start.t,
    finished_at: run.finishedAt,
    duration_ms: run.finishedAt === null ? null : run.ranMs + run.finishedAt - run.sessionStartedAt,
    rows: run.rowCount,
    steps: [...run.steps.values()],
    outputs: run.outputs,
    files,
    damaged_lines: run.damagedLines,
    cost: costOf(run),
    skipped_rows: run.start.skipped_rows ?? [],
    ...(unlisted && (unlisted.steps > 0 || unlisted.files > 0) ? { not_listed: unlisted } : {}),
  };
}

/** What a summary fold keeps: the rows it lists (see LISTED_ROWS) and the steps that did not succeed. */
const SUMMARY_FOLD: FoldPurpose = { summaryOnly: { listedRows: LISTED_ROWS } };

const summaryResult = (folded: Result<RunState, UnreadableJournal>, unlisted: UnlistedCounts) =>
  folded.ok ? ok(summaryOf(folded.value, unlisted)) : err(folded.error);

/**
 * The summary of the journal at `path`, folded as it is read: bounded memory however long the
 * journal. `runs show`, and run.json after a resume.
 */
export function summariseJournalFile(path: string): Result<RunSummary, UnreadableJournal> {
  const { folded, unlisted } = foldJournalFile(path, SUMMARY_FOLD);
  return summaryResult(folded, unlisted);
}

/**
 * A summary fold fed a run's journal lines as they are written (FileJournal.readWritten): the same
 * summary as summariseJournalFile's once the journal is closed, without reading the file again.
 */
export function liveSummaryFold(): JournalFold {
  return new JournalFold(SUMMARY_FOLD);
}

/** The summary a live summary fold reached, or why its lines describe no run. */
export function summariseFold(fold: JournalFold): Result<RunSummary, UnreadableJournal> {
  return summaryResult(fold.end(), fold.unlisted);
}

/** The summary of a journal as read from disk, or why it describes no run. */
export function summariseJournal(read: JournalRead): Result<RunSummary, UnreadableJournal> {
  const folded = foldJournal(read);
  return folded.ok ? ok(summaryOf(folded.value)) : err(folded.error);
}

/** The summary of events known to describe a run. */
export function summarise(events: JournalEvent[]): RunSummary {
  const summary = summariseJournal({ events, damagedLines: [] });
  if (!summary.ok) throw new Error(`Internal error: a journal without run-started (${summary.error.message})`);
  return summary.value;
}

/** What a summary counted instead of listing, as one line (`… and 99,000 more steps that succeeded…`), if anything. */
/** Every output file of a run, those of a batch's rows past the ones its summary lists too. */
export const fileCount = (summary: Pick<RunSummary, 'files' | 'not_listed'>): number =>
  summary.files.length + (summary.not_listed?.files ?? 0);

export function notListedLine(summary: RunSummary): string | undefined {
  const unlisted = summary.not_listed;
  if (!unlisted) return undefined;
  const count = (n: number, what: string) => `${n.toLocaleString('en')} ${what}${n === 1 ? '' : 's'}`;
  const parts = [
    ...(unlisted.steps > 0 ? [`${count(unlisted.steps, 'more step')} that succeeded`] : []),
    ...(unlisted.files > 0
      ? [`${count(unlisted.files, 'more file')} (${unlisted.bytes.toLocaleString('en')} bytes)`]
      : []),
  ];
  return `… and ${parts.join(' and ')} in rows past the first ${LISTED_ROWS.toLocaleString('en')}: see the journal`;
}

/** `$0.5200 of an estimated $0.5200`: what a run committed, beside what it was estimated at. */
export function spendFigures(cost: RunCost): string {
  // An estimate of nothing but dynamic steps is a lower bound of $0: not worth saying.
  const known = cost.estimated_usd !== null && !(cost.estimate_lower_bound && cost.estimated_usd === 0);
  const bound = cost.estimate_lower_bound ? 'at least ' : '';
  const estimate = known ? ` of an estimated ${bound}${formatUsd(cost.estimated_usd ?? 0)}` : '';
  const unpriced =
    cost.unpriced_submissions > 0 ? ` (+ ${cost.unpriced_submissions} submissions of unknown price)` : '';
  // Committed, as the cap counts it: a gateway that refunds failed tasks charged less.
  const parts = [
    ...(cost.failed_usd > 0
      ? [`${formatUsd(cost.failed_usd)} of it on tasks that failed, refunded if the gateway refunds them`]
      : []),
    // Journals older than this figure have none.
    ...((cost.unknown_usd ?? 0) > 0
      ? [
          `${formatUsd(cost.unknown_usd)} on submissions whose outcome is unknown, charged only if the gateway took them`,
        ]
      : []),
  ];
  return `${formatUsd(cost.committed_usd)}${estimate}${unpriced}${parts.length ? ` (${parts.join('; ')})` : ''}`;
}
