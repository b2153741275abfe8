import { describe, expect, it } from 'vitest';
import { foldJournal } from '../../src/store/fold.js';
import type { JournalEvent } from '../../src/store/journal.js';
import { replay, replayJournal } from '../../src/store/replay.js';
import { summariseJournal } from '../../src/store/summary.js';

const START: JournalEvent = {
  type: 'run-started',
  t: 100,
  run_id: 'r1',
  recipe: '/recipes/x.yaml',
  name: 'x',
  rows: [{ a: 1 }],
  sets: ['a=1'],
  batch: null,
  cwd: '/work',
  local_files: { '/recipes/p.png': 'abc' },
};

/** Two items of step `img`: item 0 finished and downloaded, item 1 submitted and running, item 2 sent without answer. */
const EVENTS: JournalEvent[] = [
  START,
  { type: 'step-started', t: 110, row: 0, step: 'img' },
  {
    type: 'upload-done',
    t: 111,
    hash: 'h1',
    path: '/recipes/p.png',
    file_id: 'f1',
    url: 'https://g/files/f1',
    expires_at: 9_000,
  },
  { type: 'request-sent', t: 112, row: 0, step: 'img', index: 0, slug: 's/m', request: '{}' },
  { type: 'task-submitted', t: 113, row: 0, step: 'img', index: 0, slug: 's/m', request: '{}', task_id: 'T0' },
  { type: 'request-sent', t: 114, row: 0, step: 'img', index: 1, slug: 's/m', request: '{}' },
  { type: 'task-submitted', t: 115, row: 0, step: 'img', index: 1, slug: 's/m', request: '{}', task_id: 'T1' },
  {
    type: 'task-finished',
    t: 120,
    row: 0,
    step: 'img',
    index: 0,
    task_id: 'T0',
    status: 'success',
    duration_ms: 5,
    result_expires_at: 50_000,
  },
  {
    type: 'output-written',
    t: 121,
    row: 0,
    step: 'img',
    index: 0,
    task_id: 'T0',
    url: 'https://g/results/a/0.png',
    path: '/out/img-1.png',
    bytes: 10,
  },
  { type: 'item-finished', t: 122, row: 0, step: 'img', index: 0, outputs: { images: ['x'] } },
  { type: 'request-sent', t: 123, row: 0, step: 'img', index: 2, slug: 's/m', request: '{"p":2}' },
  { type: 'request-sent', t: 124, row: 0, step: 'img', index: 3, slug: 's/m', request: '{"p":3}' },
  { type: 'submission-refused', t: 125, row: 0, step: 'img', index: 3, reason: '429' },
  { type: 'run-interrupted', t: 130 },
];

describe('one fold of the journal', () => {
  it('gives the resume state: finished items, submitted tasks, unanswered submissions, uploads, downloads', () => {
    const state = replay(EVENTS);
    expect(state.runId).toBe('r1');
    expect(state.rows).toEqual([{ a: 1 }]);
    expect(state.sets).toEqual(['a=1']);
    expect([...state.finishedItems]).toEqual([['0/img/0', { images: ['x'] }]]);
    expect([...state.submittedTasks]).toEqual([['0/img/1', { taskId: 'T1', slug: 's/m', submittedAt: 115 }]]);
    expect([...state.unansweredSubmissions]).toEqual([['0/img/2', { slug: 's/m', request: '{"p":2}' }]]);
    expect([...state.uploads]).toEqual([
      ['h1', { fileId: 'f1', url: 'https://g/files/f1', expiresAt: 9_000, path: '/recipes/p.png' }],
    ]);
    expect([...state.downloads]).toEqual([
      ['https://g/results/a/0.png', { path: '/out/img-1.png', expiresAt: 50_000 }],
    ]);
    expect(state.status).toBe('interrupted');
    expect(state.recipePath).toBe('/recipes/x.yaml');
    expect(state.cwd).toBe('/work');
    expect(state.localFiles).toEqual({ '/recipes/p.png': 'abc' });
    expect(state.damagedLines).toEqual([]);
  });

  it('a finished step drops its items from the submitted tasks', () => {
    const state = replay([
      ...EVENTS,
      { type: 'step-finished', t: 140, row: 0, step: 'img', outputs: [1, 2], duration_ms: 30 },
    ]);
    expect(state.submittedTasks.size).toBe(0);
    expect(state.finishedSteps.get('0/img')).toEqual([1, 2]);
  });

  it('times a resumed run and its steps by its sessions: the time between a stop and the resume is not theirs', () => {
    const summary = summariseJournal({
      events: [
        ...EVENTS,
        // The first session's last record is at 130; the run is resumed a minute later.
        { type: 'run-resumed', t: 60_130 },
        { type: 'step-finished', t: 60_150, row: 0, step: 'img', outputs: [1, 2], duration_ms: 30 },
        { type: 'run-finished', t: 60_160, status: 'succeeded' },
      ],
      damagedLines: [],
    });
    if (!summary.ok) throw new Error('expected a summary');
    expect(summary.value).toMatchObject({ started_at: 100, finished_at: 60_160, duration_ms: 30 + 30 });
    // Nor is it the step's, which ran from 110 to 130 and from 60_130 to 60_150.
    expect(summary.value.steps.find((s) => s.step === 'img')!.duration_ms).toBe(20 + 20);
  });

  it("lists a step's cached items in their order, whatever order the cache served them in", () => {
    const cached = (index: number, t: number): JournalEvent => ({
      type: 'item-cached',
      t,
      row: 0,
      step: 'img',
      index,
      key: `k${index}`,
    });
    const summary = summariseJournal({
      events: [
        START,
        { type: 'step-started', t: 110, row: 0, step: 'img' },
        ...[0, 1, 3, 4, 2].map((i, n) => cached(i, 120 + n)),
      ],
      damagedLines: [],
    });
    if (!summary.ok) throw new Error('expected a summary');
    expect(summary.value.steps.find((s) => s.step === 'img')!.cached).toEqual([0, 1, 2, 3, 4]);
  });

  it('gives the run summary from the same events', () => {
    const summary = summariseJournal({ events: EVENTS, damagedLines: [] });
    if (!summary.ok) throw new Error('expected a summary');
    expect(summary.value).toMatchObject({
      run_id: 'r1',
      status: 'interrupted',
      started_at: 100,
      finished_at: 130,
      duration_ms: 30,
      rows: 1,
      damaged_lines: [],
    });
    expect(summary.value.steps).toEqual([
      {
        row: 0,
        step: 'img',
        status: 'running',
        started_at: 110,
        finished_at: null,
        duration_ms: null,
        tasks: [
          { task_id: 'T0', index: 0, status: 'success' },
          { task_id: 'T1', index: 1, status: null },
        ],
        cached: [],
        error: null,
      },
    ]);
    expect(summary.value.files).toEqual([{ step: 'img', row: 0, path: '/out/img-1.png', bytes: 10 }]);
  });

  it('a resume makes the run running again; a failure is recorded on its step', () => {
    const events: JournalEvent[] = [
      ...EVENTS,
      { type: 'run-resumed', t: 200 },
      {
        type: 'step-failed',
        t: 210,
        row: 0,
        step: 'img',
        reason: 'task-failed',
        message: 'boom',
        outcome_unknown: false,
      },
    ];
    const folded = foldJournal({ events, damagedLines: [] });
    if (!folded.ok) throw new Error('expected a state');
    expect(folded.value.status).toBe('running');
    expect(folded.value.finishedAt).toBeNull();
    expect(folded.value.steps.get('0/img')).toMatchObject({
      status: 'failed',
      finished_at: 210,
      // 110 to 210, less the pause from the first session's last record (130) to the resume (200).
      duration_ms: 30,
      error: { reason: 'task-failed', message: 'boom', outcome_unknown: false },
    });
  });

  it('a killed run says which cancelled steps had a paid request on the wire, which may have been charged', () => {
    const owner = { pid: 4242, host: 'here' };
    // img[2]'s submission had left and no answer came: the process was killed there.
    const onTheWire = foldJournal(
      { events: [{ ...START, owner }, ...EVENTS.slice(1, -3)], damagedLines: [] },
      () => false,
    );
    expect(onTheWire.ok && onTheWire.value.steps.get('0/img')?.cancelled_because).toBe(
      "the run's process ended while it ran, with a paid request on the wire that may have been charged: resume goes on from there but does not send it again unless given --resubmit-unknown (check the team's tasks and balance first)",
    );
    // Killed with every request answered: nothing is in doubt.
    const answered = foldJournal(
      { events: [{ ...START, owner }, ...EVENTS.slice(1, -4)], damagedLines: [] },
      () => false,
    );
    expect(answered.ok && answered.value.steps.get('0/img')?.cancelled_because).toBe(
      "the run's process ended while it ran (resume goes on from there)",
    );
  });

  it('a run whose process is gone without a word is interrupted, and its running steps cancelled, not running', () => {
    const killed = [{ ...START, owner: { pid: 4242, host: 'here' } }, ...EVENTS.slice(1, -1)];
    const folded = foldJournal({ events: killed, damagedLines: [] }, () => false);
    expect(folded.ok && folded.value.status).toBe('interrupted');
    // It ran until its last journal line: runs list's TOOK is not blank.
    expect(folded.ok && folded.value.finishedAt).toBe(125);
    const step = folded.ok ? folded.value.steps.get('0/img') : undefined;
    expect(step).toMatchObject({ status: 'cancelled', cancelled_because: expect.stringContaining('process ended') });
    // The steps it never began are cancelled too, as a Ctrl-C tells them: runs list counts 0/2, not 0/1.
    const planned = [
      {
        ...killed[0]!,
        dag: [
          { id: 'img', action: 'model', depends_on: [] },
          { id: 'clip', action: 'model', depends_on: ['img'] },
        ],
      },
    ];
    const withDag = foldJournal(
      { events: [...planned, ...killed.slice(1)] as JournalEvent[], damagedLines: [] },
      () => false,
    );
    expect(withDag.ok && withDag.value.steps.get('0/clip')).toMatchObject({
      status: 'cancelled',
      cancelled_because: expect.stringContaining('process ended'),
    });
    // Alive, it is running still.
    const alive = foldJournal({ events: killed, damagedLines: [] }, () => true);
    expect(alive.ok && alive.value.status).toBe('running');
    expect(alive.ok && alive.value.steps.get('0/img')?.status).toBe('running');
  });

  it('keeps damaged lines, and forgets none until a forced resume accepts them', () => {
    const damaged = replayJournal({ events: EVENTS, damagedLines: [4, 9] });
    if (!damaged.ok) throw new Error('expected a state');
    expect(damaged.value.damagedLines).toEqual([4, 9]);
    expect(damaged.value.unacceptedDamage).toEqual([4, 9]);
    const accepted = replayJournal({
      events: [...EVENTS, { type: 'run-resumed', t: 300, accepted_damage: [4] }],
      damagedLines: [4, 9],
    });
    if (!accepted.ok) throw new Error('expected a state');
    expect(accepted.value.damagedLines).toEqual([4, 9]);
    expect(accepted.value.unacceptedDamage).toEqual([9]);
  });

  it('an empty journal, or one without run-started, is unreadable, not an internal error', () => {
    expect(foldJournal({ events: [], damagedLines: [] })).toEqual({
      ok: false,
      error: { reason: 'empty', message: expect.stringMatching(/empty/) },
    });
    const headless = foldJournal({ events: EVENTS.slice(1), damagedLines: [1] });
    expect(headless.ok).toBe(false);
    if (!headless.ok) expect(headless.error.reason).toBe('no-start');
  });
});

/** The start of a one-row run, for the journals below. */
const start: JournalEvent = {
  t: 0,
  type: 'run-started',
  run_id: 'r',
  recipe: 'x.yaml',
  name: 'x',
  rows: [{}],
  sets: [],
  batch: null,
};

describe('files written again by a resume', () => {
  it('lists a file once, with the size of its last write', () => {
    const written = (bytes: number): JournalEvent => ({
      t: 1,
      type: 'output-written',
      row: 0,
      step: 'image',
      index: 0,
      task_id: 't',
      url: 'http://g/r/1.png',
      path: '/o/image-1.png',
      bytes,
    });
    const folded = foldJournal({ events: [start, written(10), written(12)], damagedLines: [] });
    expect(folded.ok && folded.value.files).toEqual([{ step: 'image', row: 0, path: '/o/image-1.png', bytes: 12 }]);
  });
});

describe('items recorded again', () => {
  const at = { row: 0, step: 'edit' };
  const skipped = (index: number, reason: string): JournalEvent => ({
    t: 1,
    type: 'item-skipped',
    ...at,
    index,
    reason,
  });
  const failed = (index: number, message: string): JournalEvent => ({
    t: 1,
    type: 'item-failed',
    ...at,
    index,
    reason: 'failed',
    message,
  });
  const submitted = (index: number, task: string): JournalEvent => ({
    t: 1,
    type: 'task-submitted',
    ...at,
    index,
    slug: 'vendor-b/edit',
    request: `q${index}`,
    task_id: task,
  });
  const finished = (index: number, task: string, status: string): JournalEvent => ({
    t: 2,
    type: 'task-finished',
    ...at,
    index,
    task_id: task,
    status,
    duration_ms: 1,
    result_expires_at: null,
  });

  it('keeps one record per item, its last, in index order, and a task journaled twice as one', () => {
    const folded = foldJournal({
      events: [
        start,
        { t: 1, type: 'step-started', ...at },
        skipped(3, 'bg[3] failed'),
        skipped(1, 'bg[1] failed'),
        skipped(3, 'bg[3] failed again'),
        failed(2, 'first'),
        failed(0, 'zero'),
        failed(2, 'second'),
        submitted(5, 'task_5'),
        submitted(5, 'task_5'),
        finished(5, 'task_5', 'success'),
      ],
      damagedLines: [],
    });
    expect(folded.ok).toBe(true);
    const step = folded.ok ? folded.value.steps.get('0/edit') : undefined;
    expect(step?.skipped_items).toEqual([
      { index: 1, reason: 'bg[1] failed' },
      { index: 3, reason: 'bg[3] failed again' },
    ]);
    expect(step?.failed_items).toEqual([
      { index: 0, message: 'zero' },
      { index: 2, message: 'second' },
    ]);
    expect(step?.tasks.map((t) => t.status)).toEqual(['success', null]);
  });

  it('forgets the skipped and failed items of a step that starts again (a resume)', () => {
    const folded = foldJournal({
      events: [
        start,
        { t: 1, type: 'step-started', ...at },
        skipped(1, 'bg[1] failed'),
        failed(2, 'first'),
        { t: 3, type: 'step-started', ...at },
        failed(4, 'after the resume'),
      ],
      damagedLines: [],
    });
    const step = folded.ok ? folded.value.steps.get('0/edit') : undefined;
    expect(step?.skipped_items).toBeUndefined();
    expect(step?.failed_items).toEqual([{ index: 4, message: 'after the resume' }]);
  });
});
