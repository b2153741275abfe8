import { extname } from 'node:path';
import { taskState } from '../gateway/types.js';
import { err, ok, type Result } from '../result.js';
import { foldJournal, itemKey, stepKey, type RunState, type UnreadableJournal } from '../store/fold.js';
import type { JournalEvent, JournalRead, RunStartedEvent, TrafficKind } from '../store/journal.js';
import { summaryOf, type RunSummary } from '../store/summary.js';
import { itemLabel } from '../item-label.js';

export type MediaKind = 'image' | 'video' | 'audio' | 'other';
export type ItemStatus = 'succeeded' | 'failed' | 'running' | 'unknown' | 'skipped';

export interface ReportFile {
  path: string;
  bytes: number;
  kind: MediaKind;
}

/** One task or one for_each item of a step. */
export interface ReportItem {
  index: number;
  taskId: string | null;
  slug: string | null;
  input: Record<string, unknown> | null;
  submittedAt: number | null;
  finishedAt: number | null;
  polls: number | null;
  status: ItemStatus;
  error: string | null;
  files: ReportFile[];
  output: unknown;
  /** Restored from the step cache: no task ran for it. */
  cached: boolean;
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
  items: ReportItem[];
  output: unknown;
  /** The step whose items this one iterates: item i comes from its item i. */
  itemsFrom: string | null;
}

export interface TrafficSecond {
  second: number;
  counts: Partial<Record<TrafficKind, number>>;
  rateLimited: number;
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
}

const MEDIA: Record<string, MediaKind> = {
  '.png': 'image',
  '.jpg': 'image',
  '.jpeg': 'image',
  '.webp': 'image',
  '.gif': 'image',
  '.avif': 'image',
  '.mp4': 'video',
  '.webm': 'video',
  '.mov': 'video',
  '.mp3': 'audio',
  '.wav': 'audio',
  '.ogg': 'audio',
  '.m4a': 'audio',
};

export const mediaKind = (path: string): MediaKind => MEDIA[extname(path).toLowerCase()] ?? 'other';

const emptyItem = (index: number): ReportItem => ({
  index,
  taskId: null,
  slug: null,
  input: null,
  submittedAt: null,
  finishedAt: null,
  polls: null,
  status: 'running',
  error: null,
  files: [],
  output: undefined,
  cached: false,
  from: null,
});

/** Everything the report shows, read off the journal alone: a killed run has a report too. */
export function reportData(read: JournalRead): Result<ReportData, UnreadableJournal> {
  const folded = foldJournal(read);
  if (!folded.ok) return err(folded.error);
  const state = folded.value;
  const items = collectItems(read.events);
  const steps = [...state.steps.values()].map((record) => stepOf(state, record.row, record.step, items));
  const traffic = read.events.flatMap((e) =>
    e.type === 'requests' ? [{ second: e.second, counts: e.counts, rateLimited: e.rate_limited }] : [],
  );
  const summary = summaryOf(state);
  return ok({ summary, steps, traffic, totals: totalsOf(read.events, summary, traffic), dag: state.start.dag ?? [] });
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
    items: own.sort((a, b) => a.index - b.index),
    output: state.finishedSteps.get(stepKey(row, step)),
    itemsFrom: record.items_from ?? null,
  };
}

/** The items of every step, by `row/step`, from the task and item events. */
function collectItems(events: JournalEvent[]): Map<string, ReportItem[]> {
  const byItem = new Map<string, ReportItem>();
  const byStep = new Map<string, ReportItem[]>();
  const itemAt = (row: number, step: string, index: number): ReportItem => {
    const key = itemKey(row, step, index);
    let item = byItem.get(key);
    if (!item) {
      item = emptyItem(index);
      byItem.set(key, item);
      const list = byStep.get(stepKey(row, step)) ?? [];
      list.push(item);
      byStep.set(stepKey(row, step), list);
    }
    return item;
  };
  for (const event of events) applyItemEvent(event, itemAt);
  return byStep;
}

type ItemAt = (row: number, step: string, index: number) => ReportItem;

function applyItemEvent(event: JournalEvent, itemAt: ItemAt): void {
  switch (event.type) {
    case 'task-submitted': {
      const item = itemAt(event.row, event.step, event.index);
      Object.assign(item, {
        taskId: event.task_id,
        slug: event.slug,
        input: event.input ?? null,
        submittedAt: event.t,
      });
      Object.assign(item, { status: 'running', error: null, finishedAt: null, files: [] });
      return;
    }
    case 'task-finished': {
      const item = itemAt(event.row, event.step, event.index);
      item.finishedAt = event.t;
      item.polls = event.polls ?? null;
      const succeeded = taskState(event.status) === 'succeeded';
      item.status = succeeded ? 'succeeded' : 'failed';
      item.error = succeeded ? null : (event.error ?? `the task ended ${event.status}`);
      return;
    }
    case 'submission-refused':
      Object.assign(itemAt(event.row, event.step, event.index), {
        status: 'failed',
        error: `submission refused (${event.reason})`,
      });
      return;
    case 'submission-unknown': {
      const error = `the submission's outcome is unknown: ${event.message}`;
      Object.assign(itemAt(event.row, event.step, event.index), { status: 'unknown', error });
      return;
    }
    case 'output-written':
      itemAt(event.row, event.step, event.index).files.push({
        path: event.path,
        bytes: event.bytes,
        kind: mediaKind(event.path),
      });
      return;
    case 'item-finished': {
      const item = itemAt(event.row, event.step, event.index);
      item.status = 'succeeded';
      item.finishedAt ??= event.t;
      return;
    }
    case 'item-cached': {
      const item = itemAt(event.row, event.step, event.index);
      item.cached = true;
      item.input ??= event.input ?? null;
      return;
    }
    case 'item-skipped':
      Object.assign(itemAt(event.row, event.step, event.index), {
        status: 'skipped',
        error: `skipped: ${event.reason}`,
      });
      return;
    case 'item-failed':
      Object.assign(itemAt(event.row, event.step, event.index), { status: 'failed', error: event.message });
      return;
    default:
      return;
  }
}

function totalsOf(events: JournalEvent[], summary: RunSummary, traffic: TrafficSecond[]): ReportData['totals'] {
  const requests: Record<TrafficKind, number> = { submit: 0, poll: 0, upload: 0, tool: 0, text: 0, other: 0 };
  let rateLimited = 0;
  for (const second of traffic) {
    for (const [kind, count] of Object.entries(second.counts)) requests[kind as TrafficKind] += count ?? 0;
    rateLimited += second.rateLimited;
  }
  const hits = events.filter((e) => e.type === 'item-cached').length;
  return {
    // As summary.json counts them: every task submitted, a resubmission included.
    tasks: summary.steps.reduce((n, s) => n + s.tasks.length, 0),
    files: summary.files.length,
    requests,
    rateLimited,
    cacheHits: hits > 0 ? hits : null,
  };
}
