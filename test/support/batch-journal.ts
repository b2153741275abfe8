import type { JournalEvent } from '../../src/store/journal.js';

/** One text-to-image task a row; row 1,100 fails, every other succeeds. */
export function batchJournal(rows: number, runId = 'r'): JournalEvent[] {
  const events: JournalEvent[] = [
    {
      t: 0,
      type: 'run-started',
      run_id: runId,
      recipe: 'x.yaml',
      name: 'x',
      rows: Array.from({ length: rows }, (_, i) => ({ prompt: `tile ${i}` })),
      sets: [],
      batch: null,
    },
  ];
  for (let row = 0; row < rows; row++) {
    const at = { row, step: 'tile' };
    const item = { ...at, index: 0 };
    events.push({ t: row + 1, type: 'step-started', ...at });
    events.push({ t: row + 1, type: 'request-sent', ...item, slug: 'a/b', request: `q${row}`, cost_usd: 0.03 });
    events.push({ t: row + 1, type: 'task-submitted', ...item, slug: 'a/b', request: `q${row}`, task_id: `T${row}` });
    if (row === 1_100) {
      events.push({
        t: row + 2,
        type: 'step-failed',
        ...at,
        reason: 'task-failed',
        message: 'no',
        outcome_unknown: false,
      });
      continue;
    }
    events.push({
      t: row + 2,
      type: 'task-finished',
      ...item,
      task_id: `T${row}`,
      status: 'success',
      duration_ms: 1,
      result_expires_at: null,
    });
    const file = { task_id: `T${row}`, url: `http://g/${row}.png`, path: `/o/row-${row + 1}-tile.png`, bytes: 10 };
    events.push({ t: row + 2, type: 'output-written', ...item, ...file });
    events.push({ t: row + 2, type: 'step-finished', ...at, outputs: { url: `http://g/${row}.png` }, duration_ms: 1 });
  }
  events.push({ t: rows + 5, type: 'run-finished', status: 'failed', outputs: [] });
  return events;
}
