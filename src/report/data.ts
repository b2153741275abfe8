import { err, ok, type Result } from '../result.js';
import {
  foldJournal,
  foldJournalFile,
  itemKey,
  type RunState,
  stepKey,
  type TrafficSecond,
  type UnlistedCounts,
  type UnreadableJournal,
} from '../store/fold.js';
import type { ItemRecord, ItemStatus } from '../store/item-fold.js';
import type { JournalRead, RunStartedEvent, TrafficKind } from '../store/journal.js';
import { LISTED_ROWS, summaryOf, type RunSummary } from '../store/summary.js';
import { itemLabel } from '../item-label.js';

import { type MediaKind, mediaKind } from '../files/media-kind.js';

export { type MediaKind, mediaKind };
export type { ItemStatus, TrafficSecond };

export interface ReportFile {
  path: string;
  bytes: number;
  kind: MediaKind;
}

/** One task or one for_each item of a step: the fold's record, its files with their kinds. */
export interface ReportItem extends Omit<ItemRecord, 'row' | 'step' | 'files'> {
  files: ReportFile[];
  output: unknown;
  /** The item it comes from, for a step that iterates another step's items: `bg[3]`. */
  from: string | null;
}

export interface ReportStep {
  row: number;
  step: string;
  action: string | null;
  model: string | null;
  status: string;
  startedAt: number | null;
  finishedAt: number | null;
  durationMs: number | null;
  error: string | null;
  /** Why a cancelled step did not run (`it needs hero, which failed`). */
  cancelledBecause: string | null;
  items: ReportItem[];
  output: unknown;
  /** The step whose items this one iterates: item i comes from its item i. */
  itemsFrom: string | null;
}

export interface ReportData {
  summary: RunSummary;
  steps: ReportStep[];
  traffic: TrafficSecond[];
  totals: {
    tasks: number;
    files: number;
    requests: Record<TrafficKind, number>;
    rateLimited: number;
    cacheHits: number | null;
  };
  dag: NonNullable<RunStartedEvent['dag']>;
  /** The pauses between a run's sessions (a stop, then a resume): the timeline shades them. */
  pauses: Array<{ from: number; to: number }>;
}

/** Everything the report shows, read off the journal's one fold: a killed run has a report too. */
export function reportData(read: JournalRead): Result<ReportData, UnreadableJournal> {
  const folded = foldJournal(read);
  return folded.ok ? ok(dataOf(folded.value)) : err(folded.error);
}

/**
 * The same of the journal at `path`, folded as it is read, in memory bounded by LISTED_ROWS: the
 * steps and items of the first rows and the steps that did not succeed, the later rows' successes
 * counted (a report of a 100,000-row batch had been 120 MB, made in 1.3 GB).
 */
export function reportDataOfFile(path: string): Result<ReportData, UnreadableJournal> {
  const { folded, unlisted } = foldJournalFile(path, { summaryOnly: { listedRows: LISTED_ROWS, items: true } });
  return folded.ok ? ok(dataOf(folded.value, unlisted)) : err(folded.error);
}

function dataOf(state: RunState, unlisted?: UnlistedCounts): ReportData {
  const items = itemsByStep(state);
  const steps = [...state.steps.values()].map((record) => stepOf(state, record.row, record.step, items));
  const summary = summaryOf(state, unlisted);
  return {
    summary,
    steps,
    traffic: state.traffic,
    totals: totalsOf(state, summary, unlisted?.tasks ?? 0),
    dag: state.start.dag ?? [],
    pauses: state.pauses,
  };
}

/** The fold's items as the report shows them, by `row/step`: copies, with each file's kind. */
function itemsByStep(state: RunState): Map<string, ReportItem[]> {
  const byStep = new Map<string, ReportItem[]>();
  for (const item of state.items.values()) {
    const key = stepKey(item.row, item.step);
    const list = byStep.get(key) ?? [];
    list.push(reportItem(item));
    byStep.set(key, list);
  }
  return byStep;
}

function reportItem(item: ItemRecord): ReportItem {
  const { row: _row, step: _step, files, ...shown } = item;
  return {
    ...shown,
    files: files.map((file) => ({ ...file, kind: mediaKind(file.path) })),
    output: undefined,
    from: null,
  };
}

function stepOf(state: RunState, row: number, step: string, items: Map<string, ReportItem[]>): ReportStep {
  const record = state.steps.get(stepKey(row, step))!;
  const node = state.start.dag?.find((d) => d.id === step);
  const own = items.get(stepKey(row, step)) ?? [];
  for (const item of own) {
    const output = state.finishedItems.get(itemKey(row, step, item.index));
    if (output !== undefined) item.output = output;
    if (record.items_from !== undefined) item.from = itemLabel({ step: record.items_from, index: item.index });
  }
  // An item the step's end left without a verdict did not finish: a failed step names why.
  if (record.status === 'failed') for (const item of own) if (item.status === 'running') item.status = 'failed';
  return {
    row,
    step,
    action: node?.action ?? (record.tasks.length > 0 ? 'model' : null),
    model: node?.model ?? null,
    status: record.status,
    startedAt: record.started_at,
    finishedAt: record.finished_at,
    durationMs: record.duration_ms,
    error: record.error?.message ?? null,
    cancelledBecause: record.status === 'cancelled' ? (record.cancelled_because ?? null) : null,
    items: own.sort((a, b) => a.index - b.index),
    output: state.finishedSteps.get(stepKey(row, step)),
    itemsFrom: record.items_from ?? null,
  };
}

function totalsOf(state: RunState, summary: RunSummary, unlistedTasks: number): ReportData['totals'] {
  const requests: Record<TrafficKind, number> = { submit: 0, poll: 0, upload: 0, tool: 0, text: 0, other: 0 };
  let rateLimited = 0;
  for (const second of state.traffic) {
    for (const [kind, count] of Object.entries(second.counts)) requests[kind as TrafficKind] += count ?? 0;
    rateLimited += second.rateLimited;
  }
  // As summary.json counts them: every task submitted, a resubmission included.
  const tasks = summary.steps.reduce((n, s) => n + s.tasks.length, unlistedTasks);
  // The counts are journalled once a second: a run killed (kill -9) loses its last second's. Each
  // task was one submission at least, so the report never shows fewer submissions than tasks.
  requests.submit = Math.max(requests.submit, tasks);
  return {
    tasks,
    files: summary.files.length + (summary.not_listed?.files ?? 0),
    requests,
    rateLimited,
    cacheHits: state.cacheHits > 0 ? state.cacheHits : null,
  };
}
