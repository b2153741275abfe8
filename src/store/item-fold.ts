import { taskState } from '../gateway/types.js';
import type { JournalEvent } from './journal.js';

export type ItemStatus = 'succeeded' | 'failed' | 'running' | 'unknown' | 'skipped';

/** One task or one for_each item of a step, as the journal tells it: what the report shows of each. */
export interface ItemRecord {
  row: number;
  step: string;
  index: number;
  taskId: string | null;
  slug: string | null;
  input: Record<string, unknown> | null;
  submittedAt: number | null;
  finishedAt: number | null;
  polls: number | null;
  status: ItemStatus;
  error: string | null;
  files: Array<{ path: string; bytes: number }>;
  /** Restored from the step cache: no task ran for it. */
  cached: boolean;
  /** Where the cache had it from: when the entry was made, and the run that made it, as far as known. */
  cachedFrom: { at: number; run: string | null } | null;
}

/** The journal events that say something of one item. */
export type ItemEvent = Extract<
  JournalEvent,
  {
    type:
      | 'task-submitted'
      | 'task-finished'
      | 'submission-refused'
      | 'submission-unknown'
      | 'call-ended'
      | 'output-written'
      | 'item-finished'
      | 'item-cached'
      | 'item-skipped'
      | 'item-failed';
  }
>;

/**
 * For the `default` of an exhaustive switch over journal events: an event type left out of the
 * switch is a compile error here. At run time it does nothing: a journal written by a newer version
 * may hold kinds this one does not know, and they change nothing.
 */
export function unhandledEvent(_event: never): void {}

/** `items` by `row/step/index`, made the first time an event names the item. */
export type ItemRecords = Map<string, ItemRecord>;

function itemAt(items: ItemRecords, key: string, event: ItemEvent): ItemRecord {
  let item = items.get(key);
  if (!item) {
    item = {
      row: event.row,
      step: event.step,
      index: event.index,
      taskId: null,
      slug: null,
      input: null,
      submittedAt: null,
      finishedAt: null,
      polls: null,
      status: 'running',
      error: null,
      files: [],
      cached: false,
      cachedFrom: null,
    };
    items.set(key, item);
  }
  return item;
}

/** One event's effect on its item (`key`: the item's `row/step/index`). */
export function applyItemEvent(items: ItemRecords, key: string, event: ItemEvent): void {
  const item = itemAt(items, key, event);
  switch (event.type) {
    case 'task-submitted':
      // A resubmission starts the item afresh.
      Object.assign(item, {
        taskId: event.task_id,
        slug: event.slug,
        input: event.input ?? null,
        submittedAt: event.t,
        status: 'running',
        error: null,
        finishedAt: null,
        files: [],
      });
      return;
    case 'task-finished': {
      item.finishedAt = event.t;
      item.polls = event.polls ?? null;
      const succeeded = taskState(event.status) === 'succeeded';
      item.status = succeeded ? 'succeeded' : 'failed';
      item.error = succeeded ? null : (event.error ?? `the task ended ${event.status}`);
      return;
    }
    case 'submission-refused':
      Object.assign(item, { status: 'failed', error: `submission refused (${event.reason})` });
      if (event.input) item.input = event.input;
      return;
    case 'submission-unknown':
      Object.assign(item, { status: 'unknown', error: `the submission's outcome is unknown: ${event.message}` });
      if (event.input) item.input = event.input;
      return;
    case 'call-ended':
      // Handed over only when the call's outcome is unknown (see fold.ts).
      Object.assign(item, {
        status: 'unknown',
        finishedAt: event.t,
        error: `the text call's outcome is unknown: ${event.message ?? ''}`,
      });
      return;
    case 'output-written':
      item.files.push({ path: event.path, bytes: event.bytes });
      return;
    case 'item-finished':
      item.status = 'succeeded';
      item.finishedAt ??= event.t;
      return;
    case 'item-cached':
      item.cached = true;
      item.input ??= event.input ?? null;
      if (event.made_at !== undefined) item.cachedFrom = { at: event.made_at, run: event.made_by ?? null };
      return;
    case 'item-skipped':
      Object.assign(item, { status: 'skipped', error: `skipped: ${event.reason}` });
      return;
    case 'item-failed':
      Object.assign(item, { status: 'failed', error: event.message });
      return;
    default:
      unhandledEvent(event);
  }
}
