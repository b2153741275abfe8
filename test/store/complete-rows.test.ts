import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { JournalEvent } from '../../src/store/journal.js';
import { replayJournalFile } from '../../src/store/replay.js';
import { RowSet } from '../../src/store/row-completion.js';

/** A batch of three rows through `img` (two items) then `edit`; `recipe_outputs` as given. */
function batchJournal(recipeOutputs: string[] | undefined): JournalEvent[] {
  const start: JournalEvent = {
    type: 'run-started',
    t: 1,
    run_id: 'r1',
    recipe: '/recipes/x.yaml',
    name: 'x',
    row_count: 3,
    rows_sha256: 'digest',
    sets: [],
    batch: '/runs/r1/batch.csv',
    dag: [
      { id: 'img', action: 'model', depends_on: [] },
      { id: 'edit', action: 'model', depends_on: ['img'] },
    ],
    ...(recipeOutputs ? { recipe_outputs: recipeOutputs } : {}),
  };
  const item = (row: number, step: string, index: number, task: string, t: number): JournalEvent[] => [
    { type: 'request-sent', t, row, step, index, slug: 's/m', request: '{}' },
    { type: 'task-submitted', t, row, step, index, slug: 's/m', request: '{}', task_id: task },
    {
      type: 'task-finished',
      t,
      row,
      step,
      index,
      task_id: task,
      status: 'success',
      duration_ms: 5,
      result_expires_at: 50_000,
    },
    {
      type: 'output-written',
      t,
      row,
      step,
      index,
      task_id: task,
      url: `https://g/results/${task}.png`,
      path: `/out/${task}.png`,
      bytes: 10,
    },
    { type: 'item-finished', t, row, step, index, outputs: { images: [`${task}.png`] } },
  ];
  const events: JournalEvent[] = [start];
  for (const row of [0, 1, 2]) {
    events.push({ type: 'step-started', t: 2, row, step: 'img' });
    events.push(...item(row, 'img', 0, `I${row}a`, 3), ...item(row, 'img', 1, `I${row}b`, 3));
    events.push({ type: 'step-finished', t: 4, row, step: 'img', outputs: [{ n: 0 }, { n: 1 }], duration_ms: 2 });
    // Row 1's edit is still running when the journal ends; rows 0 and 2 are done.
    events.push({ type: 'step-started', t: 5, row, step: 'edit' });
    events.push({ type: 'request-sent', t: 5, row, step: 'edit', index: 0, slug: 's/m', request: '{}' });
    events.push({
      type: 'task-submitted',
      t: 5,
      row,
      step: 'edit',
      index: 0,
      slug: 's/m',
      request: '{}',
      task_id: `E${row}`,
    });
    if (row === 1) continue;
    events.push(...item(row, 'edit', 0, `E${row}`, 6).slice(2));
    events.push({
      type: 'step-finished',
      t: 7,
      row,
      step: 'edit',
      outputs: { images: [`E${row}.png`] },
      duration_ms: 2,
    });
  }
  return events;
}

const dir = mkdtempSync(join(tmpdir(), 'pipeline-complete-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The state `pipeline resume` starts from: the journal written to a file, folded as a resume folds it. */
function replay(events: JournalEvent[]) {
  const path = join(dir, `journal-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(path, events.map((event) => `${JSON.stringify(event)}\n`).join(''));
  const replayed = replayJournalFile(path);
  if (!replayed.ok) throw new Error(replayed.error.message);
  return replayed.value;
}

describe("a resume's fold of a batch whose recipe has no outputs", () => {
  it('keeps nothing of a row whose every step finished, and all of a row still open', () => {
    const state = replay(batchJournal([]));
    expect(state.completeRows?.has(0)).toBe(true);
    expect(state.completeRows?.has(1)).toBe(false);
    expect(state.completeRows?.has(2)).toBe(true);
    expect(state.completeRows?.size).toBe(2);
    expect([...state.finishedSteps.keys()]).toEqual(['1/img']);
    expect([...state.finishedItems.keys()]).toEqual(['1/img/0', '1/img/1']);
    expect([...state.downloads.keys()]).toEqual(['https://g/results/I1a.png', 'https://g/results/I1b.png']);
    // The open row's running task is still read again, not submitted again.
    expect([...state.submittedTasks.keys()]).toEqual(['1/edit/0']);
  });

  it('keeps every row when the recipe has outputs, or the journal does not say', () => {
    for (const outputs of [['poster'], undefined]) {
      const state = replay(batchJournal(outputs));
      expect(state.completeRows).toBeUndefined();
      expect([...state.finishedSteps.keys()]).toEqual(['0/img', '0/edit', '1/img', '2/img', '2/edit']);
      expect(state.downloads.size).toBe(8);
    }
  });
});

describe('a set of rows a bit each', () => {
  it('counts each row once and knows no row outside its count', () => {
    const rows = new RowSet(20);
    rows.add(0);
    rows.add(9);
    rows.add(9);
    rows.add(19);
    rows.add(20);
    rows.add(-1);
    expect(rows.size).toBe(3);
    expect([0, 9, 19].every((row) => rows.has(row))).toBe(true);
    expect([1, 8, 10, 18, 20, -1].some((row) => rows.has(row))).toBe(false);
  });
});
