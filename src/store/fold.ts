import { hostname } from 'node:os';
import { processIsAlive } from '../files/temp-files.js';
import { taskState } from '../gateway/types.js';
import { err, ok, type Result } from '../result.js';
import { applyItemEvent, type ItemEvent, type ItemRecords, unhandledEvent } from './item-fold.js';
import {
  CACHED_TASK_ID,
  type JournalEvent,
  type JournalRead,
  type RunOwner,
  type RunStartedEvent,
  type TrafficKind,
  forEachJournalLine,
} from './journal.js';
import { RowCompletion } from './row-completion.js';
import {
  emptySpend,
  recordAccepted,
  recordRefusal,
  recordRequest,
  recordTaskEnded,
  recordUnknown,
  type SpendFold,
} from './spend-fold.js';

export const stepKey = (row: number, step: string) => `${row}/${step}`;
export const itemKey = (row: number, step: string, index: number) => `${row}/${step}/${index}`;

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'stopped' | 'interrupted';

/** Why a step that was running when its run's process went without a word is cancelled. */
const KILLED = "the run's process ended while it ran (resume goes on from there)";
/** The same, with a paid request of the step on the wire: it may have been charged. */
const KILLED_IN_FLIGHT =
  "the run's process ended while it ran, with a paid request on the wire that may have been charged: " +
  "resume goes on from there but does not send it again unless given --resubmit-unknown (check the team's tasks and balance first)";

/** One step of one row as the journal tells it. */
export interface StepRecord {
  row: number;
  step: string;
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped' | 'cancelled';
  started_at: number | null;
  finished_at: number | null;
  duration_ms: number | null;
  tasks: Array<{ task_id: string; index: number; status: string | null }>;
  /** The items (by index) whose outputs came from the step cache, in the order they were served. */
  cached: number[];
  error: { reason: string; message: string; outcome_unknown: boolean } | null;
  /** Failed with continue_on_error: the run went on, and the failure does not fail it. */
  continued?: boolean;
  /** Why it was cancelled. */
  cancelled_because?: string;
  /** The step whose items this one iterates: its item i comes from that step's item i. */
  items_from?: string;
  /** Items that failed for good, by index. */
  failed_items?: Array<{ index: number; message: string }>;
  /** Items that did not run, by index, and why (`bg[1] failed`). */
  skipped_items?: Array<{ index: number; reason: string }>;
}

/** The requests of one second of the run, by kind, and the 429s among them. */
export interface TrafficSecond {
  second: number;
  counts: Partial<Record<TrafficKind, number>>;
  rateLimited: number;
}

/**
 * Everything a journal says about a run, folded once: the run summary, the state a resume starts
 * from, the spend and the report are all read off this.
 */
export interface RunState {
  /** The run-started record; a summary fold keeps it without its rows (see SummaryOnly), and counts them. */
  start: RunStartedEvent;
  /** Batch rows of the run. */
  rowCount: number;
  status: RunStatus;
  /** The process that started or last resumed the run, when the journal names it. */
  owner: RunOwner | null;
  finishedAt: number | null;
  /**
   * The time the run has run: each earlier session's span (from its start or resume to its last
   * record) in `ranMs`, the current one's from `sessionStartedAt`. A resume a day later does not
   * make the run a day long.
   */
  ranMs: number;
  sessionStartedAt: number;
  /**
   * The pauses between sessions: from an earlier session's last record to the resume. A step that
   * ran across one took its time less the pause (one entry per resume).
   */
  pauses: Array<{ from: number; to: number }>;
  outputs: unknown;
  /** `row/step` → the step's record, in the order the steps first appeared. */
  steps: Map<string, StepRecord>;
  files: Array<{ step: string; row: number; path: string; bytes: number }>;
  /** `row/step` → outputs of steps that finished. */
  finishedSteps: Map<string, unknown>;
  /** `row/step/index` → outputs of for_each items that finished. */
  finishedItems: Map<string, unknown>;
  /**
   * A resume's fold of a recipe without `outputs:`: the rows whose every step finished, whose
   * outputs, items and downloads are then not kept (see RowCompletion). Absent otherwise.
   */
  completeRows?: { has(row: number): boolean; readonly size: number };
  /**
   * `row/step/index` → the task submitted for an item that has not finished: a resume reads it
   * again, never submits it again, even when it ended before its outputs were all downloaded.
   */
  submittedTasks: Map<string, { taskId: string; slug: string; submittedAt: number }>;
  /** `row/step/index` → a request sent with no answer recorded: its outcome is unknown. */
  unansweredSubmissions: Map<string, { slug: string; request: string }>;
  /** `row/step/index` → a request whose answer was lost while the run went on (not a kill). */
  unknownSubmissions: Map<string, { request: string; message: string }>;
  uploads: Map<string, { fileId: string; url: string; expiresAt: number | null; path: string }>;
  downloads: Map<string, { path: string; expiresAt: number | null }>;
  /** What the run has committed: paid submissions sent, less those the gateway refused. */
  spend: SpendFold;
  /** `row/step/index` → each task or item as the report shows it, in the order they first appeared. */
  items: ItemRecords;
  /** The requests sent, second by second. */
  traffic: TrafficSecond[];
  /** Items the step cache served (each hit, a resume's included). */
  cacheHits: number;
  /** Lines of the journal that could not be read. */
  damagedLines: number[];
  /** Of those, the ones no `resume --force` has accepted yet. */
  unacceptedDamage: number[];
}

/** A journal that does not describe a run at all: empty, or its first record lost. */
export interface UnreadableJournal {
  reason: 'empty' | 'no-start';
  message: string;
}

/**
 * Whether the process that writes a run still runs. Only a process on this machine can be asked;
 * one on another machine (a shared folder) is taken to be alive.
 */
export type OwnerCheck = (owner: RunOwner) => boolean;

export const ownerAliveHere: OwnerCheck = (owner) => owner.host !== hostname() || processIsAlive(owner.pid);

/**
 * The journal folded into the run's state. A run that has not ended and whose owner process is
 * gone (killed, or its machine restarted) is `interrupted`, as a Ctrl-C would have left it.
 */
export function foldJournal(
  read: JournalRead,
  ownerAlive: OwnerCheck = ownerAliveHere,
): Result<RunState, UnreadableJournal> {
  const fold = new JournalFold();
  for (const line of read.damagedLines) fold.damaged(line);
  for (const event of read.events) fold.add(event);
  return fold.end(ownerAlive);
}

/**
 * How a summary fold keeps a big batch's memory bounded: the steps of rows from `listedRows` on
 * that succeeded are counted, not kept, and so are their files; what a resume alone reads (uploads,
 * downloads) is not kept at all, nor, unless `items` (the report's fold), the items and outputs of
 * listed rows' steps and the traffic.
 */
export interface SummaryOnly {
  listedRows: number;
  items?: boolean;
}

/** What a fold is for: all of the run (none given), a summary (run.json, runs show, the report), or a resume. */
export interface FoldPurpose {
  summaryOnly?: SummaryOnly;
  forResume?: boolean;
}

/** What a summary fold counted instead of keeping (see SummaryOnly). */
export interface UnlistedCounts {
  steps: number;
  /** The tasks those steps submitted. */
  tasks: number;
  files: number;
  bytes: number;
}

/**
 * The fold of a journal event by event, so that a journal is folded as it is read (foldJournalFile)
 * and never held whole. `end` answers the state once every event is in.
 */
export class JournalFold {
  private state: RunState | undefined;
  private readonly index: FoldIndex;
  private readonly damagedLines: number[] = [];
  private readonly accepted = new Set<number>();
  /** Events before the run-started record (none in a sound journal): folded once it comes. */
  private readonly early: JournalEvent[] = [];
  private sawEvents = false;
  /** The time of the latest record: where a session that a resume follows ended. */
  private lastAt = 0;
  readonly unlisted: UnlistedCounts = { steps: 0, tasks: 0, files: 0, bytes: 0 };

  /** `forResume`: only what a resume reads (no item records, file list or traffic: the report's and the summary's). */
  constructor({ summaryOnly, forResume }: FoldPurpose = {}) {
    this.index = {
      ...newFoldIndex(),
      ...(summaryOnly ? { summaryOnly, unlisted: this.unlisted } : {}),
      ...(forResume ? { forResume } : {}),
    };
  }

  /** A line (1-based) that could not be read. */
  damaged(line: number): void {
    this.damagedLines.push(line);
  }

  add(event: JournalEvent): void {
    this.sawEvents = true;
    if (!this.state) {
      if (event.type !== 'run-started') {
        // Only the events before the start are held: the fold begins at the run-started record.
        this.early.push(event);
        return;
      }
      // A summary needs the number of rows, not the rows (an old journal has a batch's rows inline).
      const start = this.index.summaryOnly && event.rows ? { ...event, rows: [] } : event;
      this.state = emptyState(start, event.row_count ?? event.rows?.length ?? 0, this.damagedLines);
      // A journal older than `recipe_outputs` does not say whether a row's outputs are read again: all are kept.
      const steps = event.dag?.map((step) => step.id) ?? [];
      if (this.index.forResume && event.recipe_outputs?.length === 0 && steps.length > 0) {
        this.index.completion = new RowCompletion(steps, this.state.rowCount);
        this.state.completeRows = this.index.completion.complete;
      }
      for (const before of this.early.splice(0)) this.apply(before);
    }
    this.apply(event);
  }

  private apply(event: JournalEvent): void {
    const state = this.state!;
    if (event.type === 'run-resumed') {
      for (const line of event.accepted_damage ?? []) this.accepted.add(line);
      state.ranMs += Math.max(0, this.lastAt - state.sessionStartedAt);
      if (event.t > this.lastAt) state.pauses.push({ from: this.lastAt, to: event.t });
      state.sessionStartedAt = event.t;
    }
    this.lastAt = Math.max(this.lastAt, event.t);
    applyEvent(state, event, this.index);
  }

  /**
   * The steps a killed run's started rows never began, told cancelled as a Ctrl-C tells them (runs
   * list then counts 0/3, not 0/1). Only in rows the summary lists: a later row's succeeded steps
   * are counted, not kept, and must not be taken for unstarted ones.
   */
  private cancelUnstarted(state: RunState): void {
    const steps = state.start.dag?.map((step) => step.id) ?? [];
    const listedRows = this.index.summaryOnly?.listedRows ?? Number.POSITIVE_INFINITY;
    const rows = new Set<number>();
    for (const entry of state.steps.values()) if (entry.row < listedRows) rows.add(entry.row);
    for (const row of rows)
      for (const step of steps) {
        if (state.steps.has(stepKey(row, step))) continue;
        const entry = stepOf(state, row, step);
        entry.status = 'cancelled';
        entry.cancelled_because = KILLED;
      }
  }

  end(ownerAlive: OwnerCheck = ownerAliveHere): Result<RunState, UnreadableJournal> {
    const state = this.state;
    if (!state) {
      if (!this.sawEvents && this.damagedLines.length === 0) {
        return err({ reason: 'empty', message: 'its journal is empty: the run was stopped as it began' });
      }
      return err({ reason: 'no-start', message: 'its journal has no readable run-started record' });
    }
    const { index } = this;
    for (const [entry, items] of index.skipped)
      entry.skipped_items = [...items.values()].sort((a, b) => a.index - b.index);
    for (const [entry, items] of index.failed)
      entry.failed_items = [...items.values()].sort((a, b) => a.index - b.index);
    state.unacceptedDamage = this.damagedLines.filter((line) => !this.accepted.has(line));
    if (state.status === 'running' && state.owner && !ownerAlive(state.owner)) {
      state.status = 'interrupted';
      // Its steps still running when the process went (killed, or the machine stopped) run no more.
      const onTheWire = new Set(
        [...state.unansweredSubmissions.keys()].map((key) => key.slice(0, key.lastIndexOf('/'))),
      );
      for (const entry of state.steps.values())
        if (entry.status === 'running') {
          entry.status = 'cancelled';
          entry.cancelled_because = onTheWire.has(stepKey(entry.row, entry.step)) ? KILLED_IN_FLIGHT : KILLED;
        }
      if (!index.forResume) {
        this.cancelUnstarted(state);
        // Its time is that of its last journal line: runs list shows how long it ran before it went.
        state.finishedAt = this.lastAt;
      }
    }
    return ok(state);
  }
}

/** The journal at `path` folded as it is read, a block at a time: it is never held whole. */
export function foldJournalFile(
  path: string,
  options: FoldPurpose & { ownerAlive?: OwnerCheck } = {},
): { folded: Result<RunState, UnreadableJournal>; unlisted: UnlistedCounts } {
  const fold = new JournalFold(options);
  forEachJournalLine(
    path,
    (event) => fold.add(event),
    (line) => fold.damaged(line),
  );
  return { folded: fold.end(options.ownerAlive), unlisted: fold.unlisted };
}

/**
 * What the fold looks things up by, beside the state, so that no event searches a list: a batch
 * has 100,000 items, and a search per item made the fold of its journal take minutes.
 */
interface FoldIndex {
  /** Each task's result expiry, for its downloads. */
  expiries: Map<string, number | null>;
  /** A step's tasks by `row/step/task id`. */
  tasks: Map<string, StepRecord['tasks'][number]>;
  /** Where each path is in `files`. */
  files: Map<string, number>;
  cached: Map<StepRecord, Set<number>>;
  skipped: Map<StepRecord, Map<number, { index: number; reason: string }>>;
  failed: Map<StepRecord, Map<number, { index: number; message: string }>>;
  /** A summary fold (see SummaryOnly) and what it counted instead of keeping. */
  summaryOnly?: SummaryOnly;
  unlisted?: UnlistedCounts;
  /** A resume's fold: the outputs, tasks and files a resume reads, not the report's item records. */
  forResume?: boolean;
  /** A resume's fold of a recipe without `outputs:`: the rows it stops keeping as they complete. */
  completion?: RowCompletion;
}

const newFoldIndex = (): FoldIndex => ({
  expiries: new Map(),
  tasks: new Map(),
  files: new Map(),
  cached: new Map(),
  skipped: new Map(),
  failed: new Map(),
});

/** Records a file written; a path written again (a resumed download) keeps one record, its last. */
function writeFile(state: RunState, index: FoldIndex, file: RunState['files'][number]): void {
  const place = index.files.get(file.path);
  if (place === undefined) {
    index.files.set(file.path, state.files.length);
    state.files.push(file);
  } else state.files[place] = file;
}

/** The entry of `map` for `key`, made by `make` the first time. */
function entryOf<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/** The outputs of a row of a recipe without `outputs:`: one object for every row, not one per row. */
export const NO_OUTPUTS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/**
 * The outputs of a run whose recipe has no `outputs:`, which its run-finished line leaves out: `{}`,
 * or one for each row of a batch, all the same object (a million rows hold a list, not a million objects).
 */
function emptyOutputs(rowCount: number, batch: boolean): unknown {
  return batch || rowCount > 1 ? new Array<unknown>(rowCount).fill(NO_OUTPUTS) : NO_OUTPUTS;
}

function emptyState(start: RunStartedEvent, rowCount: number, damagedLines: number[]): RunState {
  return {
    start,
    rowCount,
    status: 'running',
    owner: null,
    finishedAt: null,
    ranMs: 0,
    sessionStartedAt: start.t,
    pauses: [],
    outputs: null,
    steps: new Map(),
    files: [],
    finishedSteps: new Map(),
    finishedItems: new Map(),
    submittedTasks: new Map(),
    unansweredSubmissions: new Map(),
    unknownSubmissions: new Map(),
    uploads: new Map(),
    downloads: new Map(),
    spend: emptySpend(),
    items: new Map(),
    traffic: [],
    cacheHits: 0,
    damagedLines,
    unacceptedDamage: damagedLines,
  };
}

function stepOf(state: RunState, row: number, step: string): StepRecord {
  const key = stepKey(row, step);
  let entry = state.steps.get(key);
  if (!entry) {
    entry = {
      row,
      step,
      status: 'pending',
      started_at: null,
      finished_at: null,
      duration_ms: null,
      tasks: [],
      cached: [],
      error: null,
    };
    state.steps.set(key, entry);
  }
  return entry;
}

/**
 * One event's effect on the state; `index` is what it looks things up by (see FoldIndex).
 * The switch covers every event type: one left out does not compile (`unhandledEvent`).
 */
function applyEvent(state: RunState, event: JournalEvent, index: FoldIndex): void {
  switch (event.type) {
    case 'run-started':
    case 'run-resumed':
      state.status = 'running';
      state.owner = event.owner ?? null;
      state.finishedAt = null;
      return;
    case 'step-started': {
      const entry = stepOf(state, event.row, event.step);
      entry.status = 'running';
      entry.started_at ??= event.t;
      entry.error = null;
      delete entry.cancelled_because;
      delete entry.skipped_items;
      delete entry.failed_items;
      index.skipped.delete(entry);
      index.failed.delete(entry);
      if (event.items_from !== undefined) entry.items_from = event.items_from;
      return;
    }
    case 'step-skipped':
      stepOf(state, event.row, event.step).status = 'skipped';
      return;
    case 'step-cancelled': {
      const entry = stepOf(state, event.row, event.step);
      entry.status = 'cancelled';
      entry.cancelled_because = event.reason;
      return;
    }
    case 'request-sent':
    case 'call-sent':
      applyTaskEvent(state, event, index);
      return;
    case 'call-ended':
      applyTaskEvent(state, event, index);
      // An answered call says nothing of its item that its end does not: no record is made for it.
      if (event.outcome === 'unknown') applyItem(state, event, index);
      return;
    case 'submission-refused':
    case 'submission-unknown':
    case 'task-submitted':
    case 'task-finished':
      applyTaskEvent(state, event, index);
      applyItem(state, event, index);
      return;
    case 'output-written':
      if (index.summaryOnly) {
        listFile(state, index, { step: event.step, row: event.row, path: event.path, bytes: event.bytes });
        if (keepsItems(index, event.row)) applyItem(state, event, index);
        return;
      }
      applyItem(state, event, index);
      // A file from the step cache has a URL of an earlier run: a resume must not send it either.
      state.downloads.set(event.url, {
        path: event.path,
        expiresAt: event.task_id === CACHED_TASK_ID ? 0 : (index.expiries.get(event.task_id) ?? null),
      });
      // A cached file's URL may stand in other rows too; a task's is its row's alone.
      if (event.task_id !== CACHED_TASK_ID) index.completion?.fileDownloaded(event.row, event.url);
      // A resume downloads again an item whose download a kill cut short: one file, its last write.
      if (!index.forResume)
        writeFile(state, index, { step: event.step, row: event.row, path: event.path, bytes: event.bytes });
      return;
    case 'upload-done':
      if (index.summaryOnly) return;
      state.uploads.set(event.hash, {
        fileId: event.file_id,
        url: event.url,
        expiresAt: event.expires_at,
        path: event.path,
      });
      return;
    case 'item-cached': {
      applyItem(state, event, index);
      state.cacheHits++;
      const entry = stepOf(state, event.row, event.step);
      const served = entryOf(index.cached, entry, () => new Set(entry.cached));
      if (!served.has(event.index)) {
        served.add(event.index);
        // In the items' order, as the other lists of items are: they come from the cache nearly in
        // order, so the place is found from the end in a step or two.
        let at = entry.cached.length;
        while (at > 0 && entry.cached[at - 1]! > event.index) at--;
        entry.cached.splice(at, 0, event.index);
      }
      return;
    }
    case 'item-skipped': {
      applyItem(state, event, index);
      const entry = stepOf(state, event.row, event.step);
      // Sorted by index once the whole journal is read; a later record of an item replaces its earlier one.
      entryOf(index.skipped, entry, () => new Map()).set(event.index, { index: event.index, reason: event.reason });
      return;
    }
    case 'item-failed': {
      applyItem(state, event, index);
      const entry = stepOf(state, event.row, event.step);
      entryOf(index.failed, entry, () => new Map()).set(event.index, { index: event.index, message: event.message });
      return;
    }
    case 'item-finished': {
      applyItem(state, event, index);
      const key = itemKey(event.row, event.step, event.index);
      if (keepsOutputs(index, event.row)) state.finishedItems.set(key, event.outputs);
      index.completion?.itemFinished(event.row, key);
      state.submittedTasks.delete(key);
      return;
    }
    case 'step-finished':
    case 'step-failed':
      applyStepEnd(state, event, index);
      return;
    case 'run-finished':
      state.status = event.status;
      state.finishedAt = event.t;
      state.outputs = 'outputs' in event ? event.outputs : emptyOutputs(state.rowCount, state.start.batch !== null);
      return;
    case 'run-interrupted':
      state.status = 'interrupted';
      state.finishedAt = event.t;
      return;
    case 'requests':
      if (index.forResume || (index.summaryOnly && !index.summaryOnly.items)) return;
      state.traffic.push({ second: event.second, counts: event.counts, rateLimited: event.rate_limited });
      return;
    case 'step-cached':
      // Its items' own `item-cached` lines say what the cache served.
      return;
    default:
      // Kinds this version does not know (a journal written by a newer one) change nothing.
      unhandledEvent(event);
  }
}

/** Whether the fold keeps the items and outputs of this row's steps: a summary keeps none, the report's its listed rows'. */
function keepsItems(index: FoldIndex, row: number): boolean {
  const only = index.summaryOnly;
  return !only || (only.items === true && row < only.listedRows);
}

/** The outputs of finished steps and items, which later steps read: a resume's fold keeps them all. */
const keepsOutputs = (index: FoldIndex, row: number) => index.forResume === true || keepsItems(index, row);

function applyItem(state: RunState, event: ItemEvent, index: FoldIndex): void {
  if (index.forResume || !keepsItems(index, event.row)) return;
  applyItemEvent(state.items, itemKey(event.row, event.step, event.index), event);
}

/** A summary fold keeps the files of the rows it lists, and counts the others'. */
function listFile(state: RunState, index: FoldIndex, file: RunState['files'][number]): void {
  if (file.row < index.summaryOnly!.listedRows) {
    writeFile(state, index, file);
    return;
  }
  index.unlisted!.files++;
  index.unlisted!.bytes += file.bytes;
}

type TaskEvent = Extract<
  JournalEvent,
  {
    type:
      | 'request-sent'
      | 'submission-refused'
      | 'submission-unknown'
      | 'task-submitted'
      | 'task-finished'
      | 'call-sent'
      | 'call-ended';
  }
>;

function applyTaskEvent(state: RunState, event: TaskEvent, index: FoldIndex): void {
  switch (event.type) {
    case 'request-sent': {
      const key = itemKey(event.row, event.step, event.index);
      state.unknownSubmissions.delete(key);
      state.unansweredSubmissions.set(key, { slug: event.slug, request: event.request });
      recordRequest(state.spend, key, event.step, event.cost_usd);
      return;
    }
    // A paid text call: kept like a submission, so that a resume never sends one again blindly; no price.
    case 'call-sent': {
      const key = itemKey(event.row, event.step, event.index);
      state.unknownSubmissions.delete(key);
      state.unansweredSubmissions.set(key, { slug: event.model, request: event.request });
      return;
    }
    case 'call-ended': {
      const key = itemKey(event.row, event.step, event.index);
      state.unansweredSubmissions.delete(key);
      if (event.outcome === 'unknown')
        state.unknownSubmissions.set(key, { request: event.request, message: event.message ?? '' });
      else state.unknownSubmissions.delete(key);
      return;
    }
    case 'submission-unknown': {
      const key = itemKey(event.row, event.step, event.index);
      state.unansweredSubmissions.delete(key);
      state.unknownSubmissions.set(key, { request: event.request, message: event.message });
      recordUnknown(state.spend, key);
      return;
    }
    case 'submission-refused':
      state.unansweredSubmissions.delete(itemKey(event.row, event.step, event.index));
      recordRefusal(state.spend, itemKey(event.row, event.step, event.index), event.step);
      return;
    case 'task-submitted': {
      const key = itemKey(event.row, event.step, event.index);
      state.unansweredSubmissions.delete(key);
      recordAccepted(state.spend, key);
      state.submittedTasks.set(key, { taskId: event.task_id, slug: event.slug, submittedAt: event.t });
      const task = { task_id: event.task_id, index: event.index, status: null };
      stepOf(state, event.row, event.step).tasks.push(task);
      // A task journaled twice (by a resume) is one task: its first record takes its status.
      const taskKey = `${stepKey(event.row, event.step)}/${event.task_id}`;
      if (!index.tasks.has(taskKey)) index.tasks.set(taskKey, task);
      return;
    }
    case 'task-finished': {
      if (!index.summaryOnly) index.expiries.set(event.task_id, event.result_expires_at);
      const failed = taskState(event.status) === 'failed';
      recordTaskEnded(state.spend, itemKey(event.row, event.step, event.index), failed);
      // A task that ended failed is not read again by a resume: its item runs again, submitted afresh
      // (with `retries: 0` a resume had read the old failure and failed the same way, for ever).
      if (failed) {
        const key = itemKey(event.row, event.step, event.index);
        if (state.submittedTasks.get(key)?.taskId === event.task_id) state.submittedTasks.delete(key);
      }
      const task = index.tasks.get(`${stepKey(event.row, event.step)}/${event.task_id}`);
      if (task) task.status = event.status;
      return;
    }
    default:
      unhandledEvent(event);
  }
}

type StepEnd = Extract<JournalEvent, { type: 'step-finished' | 'step-failed' }>;

/** The time from `from` to `to` that the run ran: less the pauses between its sessions. */
function ranBetween(state: RunState, from: number, to: number): number {
  let paused = 0;
  for (const pause of state.pauses) paused += Math.max(0, Math.min(to, pause.to) - Math.max(from, pause.from));
  return to - from - paused;
}

function applyStepEnd(state: RunState, event: StepEnd, index: FoldIndex): void {
  const entry = stepOf(state, event.row, event.step);
  entry.status = event.type === 'step-finished' ? 'succeeded' : 'failed';
  entry.finished_at = event.t;
  entry.duration_ms = entry.started_at !== null ? ranBetween(state, entry.started_at, event.t) : null;
  entry.error =
    event.type === 'step-failed'
      ? { reason: event.reason, message: event.message, outcome_unknown: event.outcome_unknown }
      : null;
  if (event.type === 'step-failed' && event.continued) entry.continued = true;
  if (event.type !== 'step-finished') return;
  const key = stepKey(event.row, event.step);
  // With items skipped the step is not done: a resume runs them when their upstream items succeed.
  if (event.skipped_items?.length) return;
  // Every task submitted for the step is in its record: no search of the tasks of other steps.
  for (const task of entry.tasks) state.submittedTasks.delete(itemKey(event.row, event.step, task.index));
  if (keepsOutputs(index, event.row)) state.finishedSteps.set(key, event.outputs);
  const completed = index.completion?.stepFinished(event.row, event.step);
  if (completed) forgetCompletedRow(state, index, event.row, completed);
  if (!index.summaryOnly) return;
  if (event.row >= index.summaryOnly.listedRows && !index.failed.has(entry) && !index.skipped.has(entry)) {
    // Done for good (a resume never runs a finished step again): counted, not kept.
    forgetStepRecord(state, index, key, entry);
    index.unlisted!.steps++;
    index.unlisted!.tasks += entry.tasks.length;
  }
}

/**
 * A resume's fold lets go of a row whose every step finished (see RowCompletion): the resume
 * runs nothing of it again, and no recipe output reads its steps' outputs.
 */
function forgetCompletedRow(
  state: RunState,
  index: FoldIndex,
  row: number,
  { items, urls }: { items: string[]; urls: string[] },
): void {
  for (const step of index.completion!.stepIds) {
    const key = stepKey(row, step);
    state.finishedSteps.delete(key);
    const entry = state.steps.get(key);
    if (entry) forgetStepRecord(state, index, key, entry);
  }
  for (const key of items) state.finishedItems.delete(key);
  for (const url of urls) state.downloads.delete(url);
}

/** A finished step's record and what the fold looks it and its tasks up by, no longer kept. */
function forgetStepRecord(state: RunState, index: FoldIndex, key: string, entry: StepRecord): void {
  state.steps.delete(key);
  index.cached.delete(entry);
  index.skipped.delete(entry);
  index.failed.delete(entry);
  for (const task of entry.tasks) {
    index.tasks.delete(`${key}/${task.task_id}`);
    index.expiries.delete(task.task_id);
  }
}
