import type { JournalEvent } from './journal.js';

/** What a journal says happened, folded into the state a resumed run starts from. */
export interface ReplayedState {
  runId: string;
  rows: Array<Record<string, unknown>>;
  sets: string[];
  batch: string | null;
  /** `row/step` → outputs of steps that finished. */
  finishedSteps: Map<string, unknown>;
  /** `row/step/index` → outputs of for_each items that finished. */
  finishedItems: Map<string, unknown>;
  /**
   * `row/step/index` → the task submitted for an item that has not finished: it is read again on
   * resume, never submitted again, even when it ended before the outputs were all downloaded.
   */
  submittedTasks: Map<string, { taskId: string; slug: string; submittedAt: number }>;
  /** `row/step/index` → a request sent with no answer recorded: its outcome is unknown. */
  unansweredSubmissions: Map<string, { slug: string; request: string }>;
  /** `row/step/index` → a request whose answer was lost while the run went on (not a kill): its outcome is unknown. */
  unknownSubmissions: Map<string, { request: string; message: string }>;
  /** Uploads by content hash. */
  uploads: Map<string, { fileId: string; url: string; expiresAt: number | null; path: string }>;
  /** Downloaded resources: gateway URL → local copy. */
  downloads: Map<string, { path: string; expiresAt: number | null }>;
  status: 'running' | 'succeeded' | 'failed' | 'interrupted';
}

export const stepKey = (row: number, step: string) => `${row}/${step}`;
export const itemKey = (row: number, step: string, index: number) => `${row}/${step}/${index}`;

export function replay(events: JournalEvent[]): ReplayedState {
  const start = events.find((e) => e.type === 'run-started');
  if (!start || start.type !== 'run-started') throw new Error('Internal error: a journal without run-started');
  const state: ReplayedState = {
    runId: start.run_id,
    rows: start.rows,
    sets: start.sets,
    batch: start.batch,
    finishedSteps: new Map(),
    finishedItems: new Map(),
    submittedTasks: new Map(),
    unansweredSubmissions: new Map(),
    unknownSubmissions: new Map(),
    uploads: new Map(),
    downloads: new Map(),
    status: 'running',
  };
  const expiries = new Map<string, number | null>();
  for (const event of events) {
    switch (event.type) {
      case 'request-sent':
        state.unknownSubmissions.delete(itemKey(event.row, event.step, event.index));
        state.unansweredSubmissions.set(itemKey(event.row, event.step, event.index), { slug: event.slug, request: event.request });
        break;
      case 'submission-unknown':
        state.unansweredSubmissions.delete(itemKey(event.row, event.step, event.index));
        state.unknownSubmissions.set(itemKey(event.row, event.step, event.index), { request: event.request, message: event.message });
        break;
      case 'submission-refused':
        state.unansweredSubmissions.delete(itemKey(event.row, event.step, event.index));
        break;
      case 'task-submitted':
        state.unansweredSubmissions.delete(itemKey(event.row, event.step, event.index));
        state.submittedTasks.set(itemKey(event.row, event.step, event.index), { taskId: event.task_id, slug: event.slug, submittedAt: event.t });
        break;
      case 'task-finished':
        expiries.set(event.task_id, event.result_expires_at);
        break;
      case 'output-written':
        state.downloads.set(event.url, { path: event.path, expiresAt: expiries.get(event.task_id) ?? null });
        break;
      case 'upload-done':
        state.uploads.set(event.hash, { fileId: event.file_id, url: event.url, expiresAt: event.expires_at, path: event.path });
        break;
      case 'item-finished':
        state.finishedItems.set(itemKey(event.row, event.step, event.index), event.outputs);
        state.submittedTasks.delete(itemKey(event.row, event.step, event.index));
        break;
      case 'step-finished':
        state.finishedSteps.set(stepKey(event.row, event.step), event.outputs);
        for (const key of state.submittedTasks.keys()) if (key.startsWith(`${stepKey(event.row, event.step)}/`)) state.submittedTasks.delete(key);
        break;
      case 'run-finished':
        state.status = event.status;
        break;
      case 'run-interrupted':
        state.status = 'interrupted';
        break;
      default:
        break;
    }
  }
  return state;
}
