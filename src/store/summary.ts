import type { JournalEvent } from './journal.js';

export interface StepSummary {
  row: number;
  step: string;
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';
  started_at: number | null;
  finished_at: number | null;
  duration_ms: number | null;
  tasks: Array<{ task_id: string; index: number; status: string | null }>;
  error: { reason: string; message: string; outcome_unknown: boolean } | null;
}

export interface RunSummary {
  run_id: string;
  name: string;
  recipe: string;
  status: 'running' | 'succeeded' | 'failed' | 'interrupted';
  started_at: number;
  finished_at: number | null;
  duration_ms: number | null;
  rows: number;
  steps: StepSummary[];
  outputs: unknown;
  files: Array<{ step: string; row: number; path: string; bytes: number }>;
}

/** What `runs show` prints and run.json holds, read from the journal alone: it works for a killed run too. */
export function summarise(events: JournalEvent[]): RunSummary {
  const start = events.find((e) => e.type === 'run-started');
  if (!start || start.type !== 'run-started') throw new Error('Internal error: a journal without run-started');
  const steps = new Map<string, StepSummary>();
  const step = (row: number, id: string) => {
    const key = `${row}/${id}`;
    let entry = steps.get(key);
    if (!entry) {
      entry = { row, step: id, status: 'pending', started_at: null, finished_at: null, duration_ms: null, tasks: [], error: null };
      steps.set(key, entry);
    }
    return entry;
  };
  const summary: RunSummary = { run_id: start.run_id, name: start.name, recipe: start.recipe, status: 'running', started_at: start.t, finished_at: null, duration_ms: null, rows: start.rows.length, steps: [], outputs: null, files: [] };
  for (const event of events) {
    switch (event.type) {
      case 'step-started': {
        const entry = step(event.row, event.step);
        entry.status = 'running';
        entry.started_at ??= event.t;
        entry.error = null;
        break;
      }
      case 'step-skipped':
        step(event.row, event.step).status = 'skipped';
        break;
      case 'task-submitted':
        step(event.row, event.step).tasks.push({ task_id: event.task_id, index: event.index, status: null });
        break;
      case 'task-finished': {
        const task = step(event.row, event.step).tasks.find((t) => t.task_id === event.task_id);
        if (task) task.status = event.status;
        break;
      }
      case 'output-written':
        summary.files.push({ step: event.step, row: event.row, path: event.path, bytes: event.bytes });
        break;
      case 'step-finished':
      case 'step-failed': {
        const entry = step(event.row, event.step);
        entry.status = event.type === 'step-finished' ? 'succeeded' : 'failed';
        entry.finished_at = event.t;
        entry.duration_ms = entry.started_at !== null ? event.t - entry.started_at : null;
        entry.error = event.type === 'step-failed' ? { reason: event.reason, message: event.message, outcome_unknown: event.outcome_unknown } : null;
        break;
      }
      case 'run-resumed':
        summary.status = 'running';
        summary.finished_at = null;
        break;
      case 'run-finished':
        summary.status = event.status;
        summary.finished_at = event.t;
        summary.outputs = event.outputs;
        break;
      case 'run-interrupted':
        summary.status = 'interrupted';
        summary.finished_at = event.t;
        break;
      default:
        break;
    }
  }
  if (summary.finished_at !== null) summary.duration_ms = summary.finished_at - summary.started_at;
  summary.steps = [...steps.values()];
  // Tasks end in any order; the listing follows the names, which follow the recipe.
  summary.files.sort((a, b) => a.row - b.row || a.path.localeCompare(b.path, 'en', { numeric: true }));
  return summary;
}
